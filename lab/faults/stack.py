"""The processes a fault run breaks: its own Postgres, Redis, web server, Celery worker, and a
fake embedding provider, all under one scratch directory that is removed afterwards.

Nothing here touches the developer's database or broker: the cluster lives under the scratch
directory, Redis listens on a free port, and every child gets an explicit ``DATABASE_URL`` (so
no child can start the cluster again behind the suite's back while it is meant to be down).
Redis is both the broker and the shared cache, as in production.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from typing_extensions import override

from apps.core.embedded_postgres import ensure_embedded_postgres, pg_ctl, stop_embedded_postgres
from apps.core.local_stack import stop_process_group

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "engram_fault"
DIMENSIONS = 384


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def fake_vector(text: str) -> list[float]:
    """A deterministic unit vector per text (similar texts are not near: not a real model)."""
    seed = hashlib.sha256(text.encode()).digest()
    values = [((seed[i % 32] + i * 31) % 251) / 251.0 - 0.5 for i in range(DIMENSIONS)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class FakeEmbeddings:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint that can be told to fail."""

    def __init__(self, *, delay_seconds: float = 0.0) -> None:
        self.failing = False
        self.delay_seconds = delay_seconds
        self.calls = 0
        self.failed_calls = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.calls += 1
                if owner.delay_seconds:
                    time.sleep(owner.delay_seconds)
                if owner.failing:
                    owner.failed_calls += 1
                    self._send(503, {"error": {"message": "provider outage (injected)"}})
                    return
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else texts
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"object": "embedding", "index": i, "embedding": fake_vector(t)}
                            for i, t in enumerate(texts)
                        ],
                        "model": body.get("model", "fake"),
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )

            def _send(self, status: int, payload: Any) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            @override
            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Stack:
    """One scratch deployment. ``start()`` brings everything up; ``close()`` tears it down."""

    keep: bool = False
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="engram-fault-")))
    redis_port: int = field(default_factory=free_port)
    web_port: int = field(default_factory=free_port)
    embeddings: FakeEmbeddings = field(default_factory=lambda: FakeEmbeddings(delay_seconds=0.05))
    lease_seconds: int = 20
    web: subprocess.Popen[bytes] | None = None
    worker: subprocess.Popen[bytes] | None = None
    redis: subprocess.Popen[bytes] | None = None
    database_url: str = ""
    #: Settings over the defaults below, for the processes started from now on.
    overrides: dict[str, str] = field(default_factory=dict)
    socket_dir: str = ""
    pg_port: int = 5432

    # ------------------------------------------------------------------ environment

    @property
    def pgdata(self) -> Path:
        return self.root / "pg"

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_DEBUG": "false",
            "ENGRAM_DATA_DIR": str(self.root),
            "DATABASE_URL": self.database_url,
            "CELERY_BROKER_URL": self.broker_url,
            # The shared cache on the same Redis, as in production: stopping the broker takes
            # the cache's counts away too (apps/core/cache.py).
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/1",
            "ENGRAM_EMBEDDING_PROVIDER": "openai",
            "ENGRAM_EMBEDDING_BASE_URL": self.embeddings.base_url,
            "ENGRAM_EMBEDDING_MODEL": "fake-embedding",
            "ENGRAM_EMBEDDING_RETRY_SECONDS": "2",
            "ENGRAM_PROVIDER_TIMEOUT_SECONDS": "5",
            "ENGRAM_PROMOTION_JOB_LEASE_SECONDS": str(self.lease_seconds),
            "CELERY_TASK_TIME_LIMIT": str(self.lease_seconds - 5),
            "CELERY_TASK_SOFT_TIME_LIMIT": str(self.lease_seconds - 8),
            "ENGRAM_PROMOTION_BUDGET_PER_HOUR": "100000",
            "ENGRAM_PROMOTION_SUBJECT_BUDGET_PER_HOUR": "100000",
            "ENGRAM_PROMOTION_SWEEP_INTERVAL_SECONDS": "5",
            "ENGRAM_PROMOTION_SWEEP_IDLE_SECONDS": "2",
            "ENGRAM_MEMORY_WRITE_RATE_LIMIT": "1000000",
            "PYTHONUNBUFFERED": "1",
            **self.overrides,
        }

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.root / f"{name}.log").open("ab")
        return subprocess.Popen(  # noqa: S603 - fixed argv built here
            args,
            env=self.env(),
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def manage_json(self, *args: str) -> dict[str, Any]:
        """A command run with ``--json``: its document, whether it succeeded or failed."""
        result = subprocess.run(  # noqa: S603 - fixed argv built here
            [sys.executable, "manage.py", *args, "--json"],
            env=self.env(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            document: dict[str, Any] = json.loads(result.stdout)
        except ValueError as exc:
            raise RuntimeError(
                f"manage.py {' '.join(args)} failed:\n{result.stderr[-2000:]}"
            ) from exc
        return document

    def manage(self, *args: str) -> str:
        result = subprocess.run(  # noqa: S603 - fixed argv built here
            [sys.executable, "manage.py", *args],
            env=self.env(),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr[-2000:]}")
        return result.stdout

    # ------------------------------------------------------------------ Postgres

    def start_postgres(self) -> None:
        if self.socket_dir:
            # A restart: pgserver caches its handle per process and would not start the
            # cluster again, so start it with pg_ctl and the options pgserver uses.
            pg_ctl(
                [
                    "-w",
                    "-o",
                    '-h ""',
                    "-o",
                    f"-k {self.socket_dir}",
                    "-l",
                    str(self.pgdata / "log"),
                    "start",
                ],
                pgdata=self.pgdata,
                user="pgserver" if os.geteuid() == 0 else None,
            )
            return
        server = ensure_embedded_postgres(self.pgdata, database=DATABASE)
        self.socket_dir, self.pg_port = server.socket_dir, server.port
        self.database_url = (
            f"postgres://{server.user}@/{DATABASE}?host={server.socket_dir}&port={server.port}"
        )

    def stop_postgres(self) -> None:
        stop_embedded_postgres(self.pgdata)

    def connect(self) -> Any:
        import psycopg

        return psycopg.connect(
            host=self.socket_dir,
            port=self.pg_port,
            user="postgres",
            dbname=DATABASE,
            autocommit=True,
        )

    # ------------------------------------------------------------------ Redis

    def start_redis(self) -> None:
        self.redis = self._spawn(
            "redis",
            [
                shutil.which("redis-server") or "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
            ],
        )
        if not wait_for_port(self.redis_port, 10):
            raise RuntimeError("redis-server did not start")

    def stop_redis(self) -> None:
        self._kill(self.redis, signal.SIGTERM)
        self.redis = None

    # ------------------------------------------------------------------ web and worker

    def start_web(self) -> None:
        self.web = self._spawn(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--graceful-timeout",
                "2",
                "--timeout",
                "60",
            ],
        )
        if not wait_for_port(self.web_port, 60):
            raise RuntimeError("the web server did not start")

    def stop_web(self) -> None:
        self._kill(self.web, signal.SIGTERM)
        self.web = None

    def start_worker(self) -> None:
        self.worker = self._spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--concurrency",
                "2",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "WARNING",
            ],
        )

    def kill_worker(self) -> None:
        """SIGKILL the worker and its pool children: nothing is acked or cleaned up."""
        self._kill(self.worker, signal.SIGKILL)
        self.worker = None

    @staticmethod
    def _kill(process: subprocess.Popen[bytes] | None, sig: int) -> None:
        if process is not None:
            stop_process_group(process, sig)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.start_postgres()
        self.start_redis()
        self.manage("migrate", "--noinput", "-v", "0")
        self.start_web()
        self.start_worker()

    def close(self) -> None:
        for process in (self.worker, self.web):
            self._kill(process, signal.SIGTERM)
        self.stop_redis()
        try:
            self.stop_postgres()
        finally:
            self.embeddings.close()
            if not self.keep:
                shutil.rmtree(self.root, ignore_errors=True)
