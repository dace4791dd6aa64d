"""GET /api/v1/memory/{id}: what a memory was derived from and what was derived from it."""

import uuid

from apps.extraction.promotion.types import Candidate
from apps.memory.models import Memory
from apps.memory.services import (
    SessionTurnDraft,
    memory_graduate,
    promotion_persist,
    session_append_many,
)


def test_a_promoted_graduated_memory_shows_both_directions(tenant, agent, other_agent):
    rows = session_append_many(
        tenant=tenant,
        subject_id="agent-a",
        drafts=[
            SessionTurnDraft(session_id="s1", content="Webhooks retry 3 times", ttl_seconds=60),
            SessionTurnDraft(session_id="s1", content="Ok", role="assistant", ttl_seconds=60),
        ],
    )
    seqs = [rows[0].seq, 999_999_999]  # the second turn no longer exists
    outcome = promotion_persist(
        tenant=tenant,
        subject_id="agent-a",
        session_id="s1",
        candidates=[
            Candidate(text="Webhooks retry three times.", confidence=0.9, source_seqs=tuple(seqs))
        ],
        compiler="heuristic",
    )
    memory_id = outcome.memory_ids[0]
    Memory.objects.filter(pk=memory_id).update(recall_count=5)
    article = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory_id).article

    response = agent.get(f"/api/v1/memory/{memory_id}")
    foreign = other_agent.get(f"/api/v1/memory/{memory_id}")
    missing = agent.get(f"/api/v1/memory/{uuid.uuid4()}")

    assert response.status_code == 200
    body = response.json()["data"]
    assert body["text"] == "Webhooks retry three times."
    assert body["provenance"] == {
        "derived_from": {
            "source": "promoted",
            "session_id": "s1",
            "turn_seqs": seqs,
            "turns_present": [rows[0].seq],
            "compiler": "heuristic",
            "supersedes": [],
        },
        "derived_to": [
            {
                "id": str(article.pk),
                "title": article.title,
                "status": "published",
                "visibility": "owner",
                "relation": "graduated",
            }
        ],
    }
    assert (foreign.status_code, missing.status_code) == (404, 404)
