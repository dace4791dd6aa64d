"""The production topology on free ports (apps/core/local_stack.py), for ``make test-stack``.

One stack per session: a Postgres primary and a streaming standby over TCP, Redis (its own, on
a free port), gunicorn with two worker processes, two Celery worker processes and beat, all
under ``config.settings.production``. Only the embedding provider is a fake, an HTTP endpoint
that can be told to fail (it sits across the network in a real deployment). Tests talk to the
stack over HTTP and through ``manage.py``, as a client and an operator would.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from apps.core.local_stack import LOOPBACK, LocalStack, StackConfig, free_port
from lab.faults.stack import FakeEmbeddings

# Low enough to reach in a test, per subject, over a day-long window so that no window
# boundary falls inside a test.
WRITE_RATE_LIMIT = 30
BREAKER_FAILURES = 3


@dataclass
class RunningStack:
    stack: LocalStack
    embeddings: FakeEmbeddings

    @property
    def url(self) -> str:
        return self.stack.web_url

    def manage_json(self, *args: str) -> Any:
        return json.loads(self.stack.manage(*args, "--json").stdout)

    def sql(self, port: int, statement: str) -> Any:
        with psycopg.connect(
            host=LOOPBACK, port=port, user="postgres", dbname="engram", autocommit=True
        ) as conn:
            row = conn.execute(statement).fetchone()
            return row[0] if row else None

    def primary_sql(self, statement: str) -> Any:
        return self.sql(self.stack.config.primary_port, statement)

    def replica_sql(self, statement: str) -> Any:
        return self.sql(self.stack.config.replica_port, statement)


@pytest.fixture(scope="session")
def running_stack() -> Iterator[RunningStack]:
    embeddings = FakeEmbeddings()
    root = Path(tempfile.mkdtemp(prefix="engram-stack-"))
    stack = LocalStack(
        StackConfig(
            root=root,
            web_port=free_port(),
            primary_port=free_port(),
            replica_port=free_port(),
            redis_port=free_port(),
            log_dir=root / "logs",
            extra_env={
                "ENGRAM_EMBEDDING_PROVIDER": "openai",
                "ENGRAM_EMBEDDING_BASE_URL": embeddings.base_url,
                "ENGRAM_EMBEDDING_MODEL": "fake-embedding",
                "ENGRAM_PROVIDER_TIMEOUT_SECONDS": "5",
                "ENGRAM_BREAKER_FAILURES": str(BREAKER_FAILURES),
                "ENGRAM_BREAKER_RESET_SECONDS": "600",
                "ENGRAM_MEMORY_WRITE_RATE_LIMIT": str(WRITE_RATE_LIMIT),
                "ENGRAM_MEMORY_WRITE_RATE_WINDOW_SECONDS": "86400",
                # The tests fan one agent's requests out over 12 connections at once, so both
                # web processes serve some: the per-subject in-flight cap must not refuse them.
                "ENGRAM_SUBJECT_MAX_IN_FLIGHT": "64",
                # A paused standby still serves (the tests prove it is the one answering).
                "ENGRAM_HEAVY_READ_MAX_LAG_SECONDS": "3600",
                # A memory's recalls count once per cooldown (an hour): one is all a test has.
                "ENGRAM_MEMORY_GRADUATION_RECALL_THRESHOLD": "1",
                "ENGRAM_WEB_ACCESS_LOG": str(root / "logs" / "access.log"),
            },
        )
    )
    stack.start()
    try:
        yield RunningStack(stack=stack, embeddings=embeddings)
    finally:
        stack.stop()
        embeddings.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def tenant_slug(running_stack: RunningStack) -> str:
    slug = f"stack-{uuid.uuid4().hex[:8]}"
    running_stack.manage_json("create_tenant", "--slug", slug)
    return slug


@pytest.fixture
def issue_key(running_stack: RunningStack, tenant_slug: str) -> Callable[..., str]:
    """A fresh agent key (so a fresh subject, with its own rate-limit buckets)."""

    def _issue(role: str = "agent", agent_id: str | None = None) -> str:
        args = ["create_api_key", "--tenant", tenant_slug, "--role", role]
        if role == "agent":
            args += ["--agent-id", agent_id or f"agent-{uuid.uuid4().hex[:8]}"]
        return str(running_stack.manage_json(*args)["key"])

    return _issue


@pytest.fixture
def api(running_stack: RunningStack, issue_key: Callable[..., str]) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=running_stack.url,
        headers={"Authorization": f"Bearer {issue_key()}"},
        timeout=30,
    ) as client:
        yield client


def eventually(check: Callable[[], Any], *, timeout: float = 30.0, every: float = 0.25) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f} s: {check}")
        time.sleep(every)
