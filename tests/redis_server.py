"""A private ``redis-server`` on a free port, which a test may stop and start again (the shared
one on 127.0.0.1:6379 serves other tests)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

from apps.core import cache as shared_cache


@dataclass
class RedisServer:
    binary: str
    port: int
    #: With a directory, an append-only file there keeps what Redis held across a restart,
    #: as a production Redis's would; without one, a restart starts empty.
    directory: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.directory)]
            if self.directory is not None
            else ["--appendonly", "no"]
        )
        self.process = subprocess.Popen(  # noqa: S603 - a fixed argv
            [
                self.binary,
                *("--port", str(self.port), "--bind", "127.0.0.1", "--save", ""),
                *persistence,
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def keys(self) -> list[str]:
        client = redis.Redis(port=self.port)
        try:
            return sorted(key.decode() for key in client.keys("*"))
        finally:
            client.close()


@contextmanager
def private_redis(directory: Path | None = None) -> Iterator[RedisServer]:
    """A started server, stopped at the end; the test is skipped without ``redis-server``."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = RedisServer(binary=binary, port=port, directory=directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def redis_as_the_shared_cache(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RedisServer]:
    """A private server configured as production configures the shared cache (``REDIS_URL``,
    ``FailoverRedisCache``), in a process that has seen no failure yet and holds nothing in
    its stand-in's memory."""
    with private_redis() as server:
        settings.REDIS_URL = server.url
        settings.CACHES = {
            "default": {
                "BACKEND": "apps.core.cache.FailoverRedisCache",
                "LOCATION": server.url,
                "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
            }
        }
        monkeypatch.setattr(shared_cache, "_last_failure", float("-inf"))
        LocMemCache(shared_cache.STAND_IN_NAME, {}).clear()
        try:
            yield server
        finally:
            caches.close_all()
