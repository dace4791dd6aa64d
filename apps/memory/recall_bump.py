"""The recall-count hotness signal, kept off the hot path (spec "Recall-count hotness signal").

A recall hands its hit ids to this process's bump queue and returns. One background thread
drains the queue: every id waiting is bumped by a single UPDATE on one long-lived connection,
so a burst of recalls costs one statement, not one statement (and one new Postgres backend)
each. The UPDATE enforces the cooldown atomically in SQL, so recalls in other processes cannot
double-count; ids this process bumped within the cooldown are skipped before they reach SQL,
since the UPDATE would match none of them. At most ``MEMORY_RECALL_BUMP_MAX_PENDING`` ids may
wait; past that a recall's bump is dropped (best-effort by design: it must never slow recall
down, and a process that dies loses what was waiting, at most a fraction of a second's bumps).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import timedelta

from cachetools import TTLCache
from django.conf import settings
from django.db import connection, connections, router
from django.utils import timezone

from apps.core.db.cursors import server_bound_cursor
from apps.core.telemetry import emit

logger = logging.getLogger(__name__)

# How many recently bumped ids a process remembers, so a hot memory's every recall within the
# cooldown skips the UPDATE; past this many, the oldest are forgotten (and cost one no-op
# UPDATE row each, which the SQL cooldown still refuses).
RECENTLY_BUMPED_MAX = 100_000
IDLE_CLOSE_SECONDS = 30.0


def bump_recall_counts(*, memory_ids: Iterable[uuid.UUID]) -> int:
    """+1 recall for each memory not bumped within the cooldown. Returns rows bumped.

    One statement written once, bound server-side: compiling the equivalent queryset
    ``update()`` for every drain cost more client CPU than the UPDATE costs Postgres."""
    from apps.memory.models import Memory

    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.MEMORY_RECALL_BUMP_COOLDOWN_SECONDS)
    using = router.db_for_write(Memory)
    with server_bound_cursor(using) as cursor:
        cursor.execute(_bump_statement(using), [now, list(memory_ids), cutoff])
        return int(cursor.rowcount)


@functools.cache
def _bump_statement(using: str) -> str:
    from apps.memory.models import Memory

    quote = connections[using].ops.quote_name
    table, count, recalled = (
        quote(Memory._meta.db_table),
        quote("recall_count"),
        quote("last_recalled_at"),
    )
    return (
        f"UPDATE {table} SET {count} = {count} + 1, {recalled} = %s "  # noqa: S608
        f"WHERE {quote('id')} = ANY(%s) AND ({recalled} IS NULL OR {recalled} < %s)"
    )


class BumpQueue:
    """Ids waiting to be bumped, and the one thread that bumps them (started on first use)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._waiting: set[uuid.UUID] = set()
        self._in_flight = False
        self._close_requested = False
        self._thread: threading.Thread | None = None
        self._recently_bumped: TTLCache[uuid.UUID, bool] = TTLCache(
            maxsize=RECENTLY_BUMPED_MAX, ttl=settings.MEMORY_RECALL_BUMP_COOLDOWN_SECONDS
        )

    def add(self, memory_ids: Sequence[uuid.UUID]) -> bool:
        """Queue the ids; False when there was nothing new to bump or the queue is full."""
        with self._condition:
            fresh = {pk for pk in memory_ids if pk not in self._recently_bumped}
            fresh -= self._waiting
            if not fresh:
                return False
            if len(self._waiting) + len(fresh) > settings.MEMORY_RECALL_BUMP_MAX_PENDING:
                emit("memory_recall.bump_dropped", {"count": len(fresh)})
                return False
            self._waiting |= fresh
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._drain_forever, name="recall-bump", daemon=True
                )
                self._thread.start()
            self._condition.notify_all()
            return True

    def wait_until_idle(self, timeout: float, *, close_connection: bool = False) -> None:
        """Block until every queued id has been bumped (tests and graceful shutdown); with
        ``close_connection``, also until the bump thread has closed its database connection
        (a test database cannot be dropped while a connection to it is open)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            alive = self._thread is not None and self._thread.is_alive()
            self._close_requested = close_connection and alive
            self._condition.notify_all()
            while self._waiting or self._in_flight or self._close_requested:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("recall bumps still pending")
                self._condition.wait(remaining)

    def _drain_forever(self) -> None:
        while True:
            with self._condition:
                while not self._waiting:
                    if self._close_requested:
                        connection.close()
                        self._close_requested = False
                        self._condition.notify_all()
                    if not self._condition.wait(IDLE_CLOSE_SECONDS):
                        # Idle: no connection is pinned while nobody recalls.
                        connection.close()
                batch, self._waiting = self._waiting, set()
                self._in_flight = True
            try:
                bump_recall_counts(memory_ids=batch)
            except Exception:  # a lost bump is acceptable; a dead bump thread is not
                logger.exception("recall bump failed")
                connection.close()
            else:
                # Kept open between batches, and replaced once CONN_MAX_AGE has passed.
                connection.close_if_unusable_or_obsolete()
            with self._condition:
                for pk in batch:
                    self._recently_bumped[pk] = True
                self._in_flight = False
                self._condition.notify_all()


_queue = BumpQueue()


def schedule_recall_bump(*, memory_ids: Sequence[uuid.UUID]) -> bool:
    """Queue a bump; returns False when it was dropped (nothing new to bump or over the cap)."""
    return _queue.add(memory_ids)


def wait_for_pending_bumps(timeout: float = 10.0, *, close_connection: bool = False) -> None:
    """Block until queued bumps finish (tests and graceful shutdown)."""
    _queue.wait_until_idle(timeout, close_connection=close_connection)
