"""Redis, the production topology's broker and shared cache, goes away and comes back: requests
are served meanwhile, and the worker embeds again afterwards without being restarted."""

from __future__ import annotations

import time

import pytest

from apps.core.local_stack import stop_process_group
from tests.stack.conftest import eventually

pytestmark = pytest.mark.stack


def _embedded(api, memory_id: str, query: str) -> bool:
    hits = api.post("/api/v1/memory/recall", json={"query": query}).json()["data"]
    return any(
        hit["memory"]["id"] == memory_id and hit["embedding_status"] == "ready" for hit in hits
    )


def test_requests_are_served_while_redis_is_down_and_the_worker_resumes(api, running_stack):
    before = api.post("/api/v1/memory", json={"text": "The boiler was serviced in May"})
    assert before.status_code == 201, before.text
    eventually(lambda: _embedded(api, before.json()["data"]["id"], "boiler serviced"))
    worker = running_stack.stack.processes["worker"]

    stop_process_group(running_stack.stack.processes["redis"])
    try:
        during = api.post("/api/v1/memory", json={"text": "The spare key is under the mat"})
        recalled = api.post("/api/v1/memory/recall", json={"query": "boiler serviced"})
        listed = api.get("/api/v1/memory")
        turn = api.post(
            "/api/v1/memory/sessions/outage/turns",
            json={"role": "user", "content": "Is the boiler fine?", "ttl_seconds": 600},
        )
        readyz = api.get("/readyz")
    finally:
        running_stack.stack.start_redis()

    assert [r.status_code for r in (during, recalled, listed, turn)] == [201, 200, 200, 201], [
        r.text for r in (during, recalled, listed, turn)
    ]
    assert before.json()["data"]["id"] in [hit["memory"]["id"] for hit in recalled.json()["data"]]
    assert readyz.status_code == 503
    assert readyz.json()["error"]["details"]["cache"].startswith("error")
    # The worker lived through the outage and embeds what was written during it (the beat's
    # backfill finds the row whose wake-up was lost with Redis).
    time.sleep(1)
    assert worker.poll() is None
    eventually(
        lambda: _embedded(api, during.json()["data"]["id"], "spare key under the mat"),
        timeout=120,
    )
