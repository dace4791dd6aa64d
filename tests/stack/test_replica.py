"""Heavy reads are served by the streaming standby: with its replay paused, a new memory is on
the primary and not found by recall, until replay resumes."""

from __future__ import annotations

import time

import pytest

from tests.stack.conftest import eventually

pytestmark = pytest.mark.stack


def _pause_replay(running_stack) -> None:
    """``pg_wal_replay_pause()`` only requests the pause; the startup process pauses before the
    next record it would apply, so give it one (a flushed logical message) and wait."""
    running_stack.replica_sql("SELECT pg_wal_replay_pause()")
    for _ in range(200):
        if running_stack.replica_sql("SELECT pg_get_wal_replay_pause_state()") == "paused":
            return
        running_stack.primary_sql("SELECT pg_logical_emit_message(false, 'engram-tests', 'x')")
        time.sleep(0.05)
    raise AssertionError("replay did not pause")


def _texts(api, query: str) -> tuple[list[str], dict]:
    body = api.post("/api/v1/memory/recall", json={"query": query, "mode": "keyword"}).json()
    return [hit["memory"]["text"] for hit in body["data"]], body["meta"]


def test_recall_reads_the_replica(api, running_stack):
    _pause_replay(running_stack)
    try:
        written = api.post("/api/v1/memory", json={"text": "quokka sightings on Rottnest"})
        assert written.status_code == 201, written.text
        memory_id = written.json()["data"]["id"]
        assert running_stack.primary_sql(
            f"SELECT count(*) FROM memory_memory WHERE id = '{memory_id}'"  # noqa: S608
        )

        texts, meta = _texts(api, "quokka sightings")

        assert texts == []
        assert meta["degraded_reason"] is None
        # The write's own reads stay on the primary.
        assert api.get(f"/api/v1/memory/{memory_id}").status_code == 200
    finally:
        running_stack.replica_sql("SELECT pg_wal_replay_resume()")

    assert eventually(lambda: _texts(api, "quokka sightings")[0]) == [
        "quokka sightings on Rottnest"
    ]
