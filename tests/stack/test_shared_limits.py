"""Rate limits and circuit breakers are shared by both web processes (state in Redis), not
counted per process. Each test checks in the access log that both processes served it."""

from __future__ import annotations

import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.stack.conftest import BREAKER_FAILURES, WRITE_RATE_LIMIT, RunningStack

pytestmark = pytest.mark.stack


def _access_log(running_stack: RunningStack) -> str:
    assert running_stack.stack.config.log_dir is not None
    return (running_stack.stack.config.log_dir / "access.log").read_text(errors="replace")


def _serving_pids(running_stack: RunningStack, agent: str) -> set[str]:
    log = _access_log(running_stack)
    return {
        match.group(1)
        for line in log.splitlines()
        if f'"{agent}"' in line and (match := re.search(r"pid<(\d+)>", line))
    }


def _fan_out(running_stack, key: str, agent: str, path: str, bodies: list[dict]) -> list[int]:
    """Each request on its own connection, many at once, so both processes accept some."""

    def send(body: dict) -> int:
        response = httpx.post(
            f"{running_stack.url}{path}",
            json=body,
            headers={"Authorization": f"Bearer {key}", "User-Agent": agent},
            timeout=30,
        )
        return response.status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        return list(pool.map(send, bodies))


def test_the_write_rate_limit_is_one_bucket_across_web_processes(running_stack, issue_key):
    key, agent = issue_key(), f"rate-{uuid.uuid4().hex[:8]}"
    bodies = [{"text": f"note {n}"} for n in range(2 * WRITE_RATE_LIMIT)]

    statuses = _fan_out(running_stack, key, agent, "/api/v1/memory", bodies)

    assert len(_serving_pids(running_stack, agent)) == 2, _access_log(running_stack)[-1500:]
    assert statuses.count(201) == WRITE_RATE_LIMIT
    assert statuses.count(429) == WRITE_RATE_LIMIT


def test_an_open_embedding_breaker_is_seen_by_every_process(running_stack, issue_key):
    key, agent = issue_key(), f"breaker-{uuid.uuid4().hex[:8]}"
    fake = running_stack.embeddings
    fake.failing = True
    try:
        # Trip it: each recall's query embedding fails until the breaker opens.
        with httpx.Client(
            base_url=running_stack.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        ) as client:
            for _ in range(BREAKER_FAILURES + 2):
                client.post("/api/v1/memory/recall", json={"query": "anything"})
        calls_when_open = fake.calls

        statuses = _fan_out(
            running_stack,
            key,
            agent,
            "/api/v1/memory/recall",
            [{"query": f"question {n}"} for n in range(24)],
        )
        time.sleep(0.5)

        assert len(_serving_pids(running_stack, agent)) == 2
        assert set(statuses) == {200}
        # A breaker per process would let the other process call the failing provider
        # BREAKER_FAILURES more times before it opened there too.
        assert fake.calls == calls_when_open
    finally:
        fake.failing = False
