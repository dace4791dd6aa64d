"""Heavy reads and a streaming replica: measure its lag, and bypass it when it is behind or down.

With ``HEAVY_READ_DATABASE_URL`` naming a hot standby, ``heavy_read`` (kNN recall, hybrid
search) reads there. Every request decides once, at its start (:class:`HeavyReadRoutingMiddleware`
in apps/core/middleware.py), whether the replica may serve it: when the replica cannot be
reached, or its replay lags more than ``HEAVY_READ_MAX_LAG_SECONDS`` behind what the primary
has flushed, the request's ``heavy_read`` alias is pointed at the primary's connection for the
whole request and :func:`heavy_read_bypass_reason` says why, so the heavy-read selectors put it
in ``meta.degraded_reason``. Reads that must see the caller's own writes (surfaced events,
session history, idempotency records, quota counts) never use ``heavy_read`` at all.

Lag is measured as the primary's flushed WAL position against the standby's replayed one: none
behind means 0 s; otherwise the age of the last transaction the standby replayed, an upper
bound on how stale it is (unknown, and so past any bound, when it has replayed no transaction
since it started). A measurement is reused for ``HEAVY_READ_REPLICA_CHECK_SECONDS`` in
each process, so a replica can serve at most that much longer past the bound.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from prometheus_client import Gauge

from apps.core.db.routers import HEAVY_READ, PRIMARY

REPLICA_LAG = "replica_lag"
REPLICA_UNAVAILABLE = "replica_unavailable"

LAG_SECONDS = Gauge(
    "engram_replica_lag_seconds", "Replay lag of the heavy-read replica (upper bound, seconds)"
)
LAG_BYTES = Gauge("engram_replica_lag_bytes", "WAL the heavy-read replica has not replayed")
UP = Gauge("engram_replica_up", "1 when the heavy-read replica answered its last lag probe")


@dataclass(frozen=True)
class ReplicaStatus:
    configured: bool
    available: bool
    lag_seconds: float | None
    lag_bytes: int | None
    #: Why heavy reads go to the primary now (REPLICA_LAG | REPLICA_UNAVAILABLE), or None.
    bypass_reason: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "configured": self.configured,
            "available": self.available,
            "lag_seconds": self.lag_seconds,
            "lag_bytes": self.lag_bytes,
            "bypass_reason": self.bypass_reason,
        }


NOT_CONFIGURED = ReplicaStatus(False, True, None, None, None)
_cached: tuple[float, ReplicaStatus] | None = None
_cache_lock = threading.Lock()
_bypass: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "engram_heavy_read_bypass", default=None
)
# While a request's heavy_read alias points at the primary, the replica's own connection, so a
# probe inside that request still measures the replica.
_replica_connection: contextvars.ContextVar[BaseDatabaseWrapper | None] = contextvars.ContextVar(
    "engram_replica_connection", default=None
)


def _measure() -> ReplicaStatus:
    replica = _replica_connection.get() or connections[HEAVY_READ]
    try:
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
            row = cursor.fetchone()
            flushed = str(row[0]) if row else "0/0"
    except DatabaseError:
        # The primary is the request's problem, not the replica's: no verdict.
        return ReplicaStatus(True, True, None, None, None)
    try:
        with replica.cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(),"
                " COALESCE(pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint,"
                " EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())",
                [flushed],
            )
            row = cursor.fetchone()
    except DatabaseError:
        replica.close()
        UP.set(0)
        return ReplicaStatus(True, False, None, None, REPLICA_UNAVAILABLE)
    assert row is not None  # noqa: S101 - a SELECT without FROM returns one row
    in_recovery, behind, age = bool(row[0]), int(row[1] or 0), row[2]
    lag_bytes = max(0, behind) if in_recovery else 0
    lag_seconds = replay_lag_seconds(lag_bytes=lag_bytes, last_replay_age=age)
    UP.set(1)
    LAG_BYTES.set(lag_bytes)
    LAG_SECONDS.set(math.inf if lag_seconds is None else lag_seconds)
    fit = lag_seconds is not None and lag_seconds <= settings.HEAVY_READ_MAX_LAG_SECONDS
    return ReplicaStatus(
        True,
        True,
        None if lag_seconds is None else round(lag_seconds, 3),
        lag_bytes,
        None if fit else REPLICA_LAG,
    )


def replay_lag_seconds(*, lag_bytes: int, last_replay_age: float | None) -> float | None:
    """How stale the replica may be: 0 when it has replayed all the primary flushed, else the
    age of the last transaction it replayed. None (unknown, so never fit) when it is behind but
    has replayed no transaction since it started: nothing bounds its staleness then."""
    if lag_bytes <= 0:
        return 0.0
    if last_replay_age is None:
        return None
    return max(0.0, float(last_replay_age))


def replica_status(*, fresh: bool = False) -> ReplicaStatus:
    """The heavy-read replica's state, measured at most every HEAVY_READ_REPLICA_CHECK_SECONDS."""
    global _cached
    if not settings.HEAVY_READ_IS_REPLICA:
        return NOT_CONFIGURED
    now = time.monotonic()
    with _cache_lock:
        cached = _cached
    if (
        not fresh
        and cached is not None
        and now - cached[0] < settings.HEAVY_READ_REPLICA_CHECK_SECONDS
    ):
        return cached[1]
    status = _measure()
    with _cache_lock:
        _cached = (time.monotonic(), status)
    return status


def heavy_read_bypass_reason() -> str | None:
    """Why this request's heavy reads are served by the primary, if they are."""
    return _bypass.get()


@contextmanager
def heavy_reads_routed() -> Iterator[str | None]:
    """For one request: ``heavy_read`` is the replica, or the primary when it is not fit."""
    reason = replica_status().bypass_reason
    if reason is None:
        yield None
        return
    token = _bypass.set(reason)
    replica = connections[HEAVY_READ]
    replica_token = _replica_connection.set(replica)
    connections[HEAVY_READ] = connections[PRIMARY]
    try:
        yield reason
    finally:
        connections[HEAVY_READ] = replica
        _replica_connection.reset(replica_token)
        _bypass.reset(token)
