"""Beat's schedule lives in the database and reaches the workers; a graduation fired through
``manage.py schedule run`` feeds merged recall, and ``referenced`` validates right after."""

from __future__ import annotations

import pytest

from tests.stack.conftest import eventually

pytestmark = pytest.mark.stack

PERIODIC = {
    "memory.promotion_sweep",
    "memory.graduation_sweep",
    "memory.backfill_embeddings",
    "memory.prune_expired_sessions",
}


def test_the_schedule_is_read_from_the_database(running_stack):
    listed = running_stack.manage_json("schedule", "list")

    names = {entry["name"] for entry in listed["tasks"]}
    assert names >= PERIODIC, listed


def test_a_graduation_sweep_run_by_hand_feeds_merged_recall_and_referenced(api, running_stack):
    written = api.post(
        "/api/v1/memory", json={"text": "Rotate the signing keys every ninety days"}
    ).json()["data"]
    eventually(
        lambda: (
            api.get(f"/api/v1/memory/{written['id']}").json()["data"]["embedding_status"] == "ready"
        )
    )
    # Recalled twice: hot enough to graduate under the stack's threshold of 2.
    for _ in range(2):
        hits = api.post("/api/v1/memory/recall", json={"query": "signing keys rotation"})
        assert written["id"] in [hit["memory"]["id"] for hit in hits.json()["data"]]

    def graduated() -> list[dict]:
        running_stack.stack.manage("schedule", "run", "memory.graduation_sweep")
        merged = api.post("/api/v1/recall", json={"query": "signing keys rotation"}).json()
        return [merged] if merged["knowledge"]["results"] else []

    merged = eventually(graduated, timeout=60, every=2)[0]
    article_ids = [item["id"] for item in merged["knowledge"]["results"]]

    referenced = api.post(
        f"/api/v1/recall/{merged['meta']['recall_id']}/referenced",
        json={"article_ids": article_ids},
    )

    assert referenced.status_code == 201, referenced.text
    assert referenced.json()["data"]["recorded"] == len(article_ids)
