"""Beat's schedule lives in the database and reaches the workers; a graduation fired through
``manage.py schedule run`` feeds merged recall, and ``referenced`` validates right after."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.stack.conftest import eventually

pytestmark = pytest.mark.stack

PERIODIC = {
    "memory.promotion_sweep",
    "memory.graduation_sweep",
    "memory.backfill_embeddings",
    "memory.prune_expired_sessions",
}


def test_the_worker_embeds_on_cores_divided_by_its_processes(running_stack):
    worker = running_stack.stack.processes["worker"]
    environ = Path(f"/proc/{worker.pid}/environ").read_bytes().split(b"\0")

    expected = max(1, len(os.sched_getaffinity(0)) // running_stack.stack.config.worker_processes)
    assert f"ENGRAM_LOCAL_EMBEDDING_THREADS={expected}".encode() in environ


def test_the_schedule_is_read_from_the_database(running_stack):
    listed = running_stack.manage_json("schedule", "list")

    names = {entry["name"] for entry in listed["tasks"]}
    assert names >= PERIODIC, listed


def test_a_graduation_sweep_run_by_hand_feeds_merged_recall_and_referenced(api, running_stack):
    text = "Rotate the signing keys every ninety days"
    written = api.post("/api/v1/memory", json={"text": text}).json()["data"]
    eventually(
        lambda: (
            api.get(f"/api/v1/memory/{written['id']}").json()["data"]["embedding_status"] == "ready"
        )
    )

    # The fake embedder puts only an identical text near (cosine 1.0, above the bump's minimum
    # similarity): the recall that finds it by its vector is the one the cooldown counts, and
    # the stack's threshold is 1. Recall reads the standby, which may not have replayed the
    # row or its vector yet.
    def recalled_by_meaning() -> bool:
        hits = api.post("/api/v1/memory/recall", json={"query": text}).json()["data"]
        return any(
            hit["memory"]["id"] == written["id"] and hit["similarity"] is not None for hit in hits
        )

    eventually(recalled_by_meaning)

    def graduated() -> list[tuple[dict[str, Any], list[str]]]:
        running_stack.stack.manage("schedule", "run", "memory.graduation_sweep")
        merged = api.post("/api/v1/recall", json={"query": text}).json()
        # This memory's article (titled by its first line), not another test's.
        ours = [item["id"] for item in merged["knowledge"]["results"] if item["title"] == text]
        return [(merged, ours)] if ours else []

    merged, article_ids = eventually(graduated, timeout=60, every=2)[0]

    referenced = api.post(
        f"/api/v1/recall/{merged['meta']['recall_id']}/referenced",
        json={"article_ids": article_ids},
    )

    assert referenced.status_code == 201, referenced.text
    assert referenced.json()["data"]["recorded"] == len(article_ids)
