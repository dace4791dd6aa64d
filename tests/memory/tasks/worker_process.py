"""Start a real `celery worker` process against the test database, over Redis."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from celery import Celery
from django.db import connection

REDIS_URL = "redis://127.0.0.1:6379/14"
ROOT = Path(__file__).resolve().parents[3]


def redis_answers() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def database_url() -> str:
    # A Unix-socket host goes in the query string (django-environ passes it to libpq).
    s = connection.settings_dict
    return f"postgres://{s['USER']}@/{s['NAME']}?host={s['HOST']}&port={s['PORT']}"


def start_worker(**env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "solo",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "WARNING",
        ],
        env={
            **os.environ,
            "CELERY_BROKER_URL": REDIS_URL,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url(),
            **env,
        },
        cwd=ROOT,
        start_new_session=True,
    )


def kill_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no shutdown hook, no ack, nothing the worker can clean up."""
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=20)


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_worker(worker)


def producer() -> Celery:
    # Not the current app: shared tasks the test process sends must keep using its own broker.
    app = Celery("probe", broker=REDIS_URL, set_as_current=False)
    return app


def purge_queue() -> None:
    with producer().connection_for_write() as conn:
        conn.default_channel.client.flushdb()
