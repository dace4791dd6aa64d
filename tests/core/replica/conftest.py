"""A real hot standby of the test cluster (pg_basebackup -R), and ``heavy_read`` pointed at it.

The standby streams from the embedded test cluster, so it holds every test database; a test
points ``connections["heavy_read"]`` at the standby's copy of its own database. Pausing replay
(``pg_wal_replay_pause()``) makes the lag real: the primary moves on, the standby does not.
Tests here hold an exclusive lock on the standby, since a paused replay is shared by every
database on it (and pytest-xdist runs this module's tests in two processes).
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connections, transaction
from django.db.backends.postgresql.base import DatabaseWrapper

import apps.core.replica as replica_module
from apps.core.db.routers import HEAVY_READ, PRIMARY
from apps.core.embedded_postgres import EmbeddedServer, ensure_embedded_standby


@pytest.fixture(scope="session")
def standby(django_db_setup: None) -> EmbeddedServer:
    if settings.EMBEDDED_POSTGRES_DIR is None:
        pytest.skip("the replica tests clone the embedded test cluster")
    primary = connections[PRIMARY].settings_dict
    pgdata = Path(settings.EMBEDDED_POSTGRES_DIR).parent / "pg-replica"
    return ensure_embedded_standby(
        EmbeddedServer(socket_dir=primary["HOST"], port=int(primary["PORT"])), pgdata
    )


class Standby:
    def __init__(self, server: EmbeddedServer, database: str) -> None:
        self.server = server
        self.database = database

    def sql(self, statement: str) -> Any:
        with psycopg.connect(
            host=self.server.socket_dir,
            port=self.server.port,
            user=self.server.user,
            dbname=self.database,
            autocommit=True,
        ) as conn:
            row = conn.execute(statement).fetchone()
            return row[0] if row else None

    def pause(self) -> None:
        """Pause replay and wait until it has taken effect: ``pg_wal_replay_pause()`` only
        requests it, and the startup process pauses before the next record it would apply (a
        flush gives it one)."""
        self.sql("SELECT pg_wal_replay_pause()")
        for _ in range(200):
            if self.sql("SELECT pg_get_wal_replay_pause_state()") == "paused":
                return
            self.flush_primary()
            time.sleep(0.05)
        raise AssertionError("replay did not pause")

    def resume(self) -> None:
        self.sql("SELECT pg_wal_replay_resume()")

    def flush_primary(self) -> None:
        """Flush the primary's WAL: with ``synchronous_commit=off`` a commit that has returned
        may not be flushed yet, and the replica lag is measured against flushed WAL. A commit
        flushes synchronously only when its transaction wrote WAL of its own (an xid alone
        does not), hence the logical message."""
        with transaction.atomic(using=PRIMARY), connections[PRIMARY].cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = on")
            cursor.execute("SELECT pg_logical_emit_message(true, 'engram-tests', 'flush')")

    def caught_up(self) -> None:
        """Wait until the standby has replayed every commit the primary has acknowledged. With
        ``synchronous_commit=off`` an acknowledged commit may still sit in the primary's WAL
        buffers, unsent, so flush first and wait for the flushed position."""
        self.flush_primary()
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
            target = cursor.fetchone()[0]
        for _ in range(600):
            if self.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn"):
                return
            time.sleep(0.05)
        raise AssertionError("the standby did not catch up")


def _wrapper(server: EmbeddedServer, database: str, port: int | None = None) -> DatabaseWrapper:
    base = connections[HEAVY_READ].settings_dict
    return DatabaseWrapper(
        {
            **base,
            "NAME": database,
            "HOST": server.socket_dir,
            "PORT": str(port or server.port),
            "OPTIONS": {**base.get("OPTIONS", {}), "connect_timeout": 2},
            "TEST": {},
        },
        alias=HEAVY_READ,
    )


@pytest.fixture
def replica(standby: EmbeddedServer, settings: Any) -> Iterator[Standby]:
    """``heavy_read`` is the standby for this test; replay runs again afterwards."""
    lock_path = Path(settings.EMBEDDED_POSTGRES_DIR).parent / ".pg-replica.tests.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        database = connections[PRIMARY].settings_dict["NAME"]
        handle = Standby(standby, database)
        handle.resume()
        handle.caught_up()
        settings.HEAVY_READ_IS_REPLICA = True
        settings.HEAVY_READ_REPLICA_CHECK_SECONDS = 0
        settings.HEAVY_READ_MAX_LAG_SECONDS = 3600
        original = connections[HEAVY_READ]
        connections[HEAVY_READ] = _wrapper(standby, database)
        replica_module._cached = None
        try:
            yield handle
        finally:
            connections[HEAVY_READ].close()
            connections[HEAVY_READ] = original
            replica_module._cached = None
            handle.resume()
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def replica_down(standby: EmbeddedServer) -> DatabaseWrapper:
    """A heavy_read connection to a port nothing listens on."""
    from apps.core.embedded_postgres import free_port

    return _wrapper(standby, connections[PRIMARY].settings_dict["NAME"], port=free_port())
