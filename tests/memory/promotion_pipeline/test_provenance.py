"""Promoted memories record where they came from and when it happened."""

from datetime import UTC, datetime

from apps.memory.models import Memory, SessionMemory
from apps.memory.services import (
    SessionTurnDraft,
    promotion_request,
    promotion_run,
    session_append_many,
)
from tests.memory.promotion_pipeline.conftest import add_turns, fact

MEMORY = "/api/v1/memory"
SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _promote(tenant, session="s1"):
    request = promotion_request(tenant=tenant, subject_id="agent-a", session_id=session)
    promotion_run(job_id=request.job_id)


def test_heuristic_memories_name_their_turn_compiler_and_time(tenant, agent):
    turns = session_append_many(
        tenant=tenant,
        subject_id="agent-a",
        drafts=[
            SessionTurnDraft(
                session_id="s1", content=content, role=role, ttl_seconds=600, occurred_at=SAID
            )
            for role, content in (
                ("user", "Let me check the logs."),
                ("assistant", "Sure."),
                ("user", "I always deploy with Argo CD."),
            )
        ],
    )

    _promote(tenant)

    memory = Memory.objects.get(tenant=tenant, source="promoted")
    assert memory.text == "The user always deploys with Argo CD."
    assert (memory.source_session_id, memory.source_turn_seqs, memory.compiler) == (
        "s1",
        [turns[2].seq],
        "heuristic",
    )
    assert memory.occurred_at == SAID
    (body,) = agent.get(f"{MEMORY}?source=promoted").json()["data"]
    assert (body["source_turn_seqs"], body["compiler"], body["occurred_at"]) == (
        [turns[2].seq],
        "heuristic",
        "2023-05-08T13:56:00Z",
    )


def test_a_models_memories_are_attributed_to_the_whole_window(tenant, promoter):
    add_turns(tenant, "agent-a", "s1", "I always deploy with Argo CD", "Noted.")
    promoter.says(fact("The user deploys with Argo CD."))

    _promote(tenant)

    memory = Memory.objects.get(tenant=tenant, source="promoted")
    seqs = list(SessionMemory.objects.order_by("seq").values_list("seq", flat=True))
    last_said = SessionMemory.objects.order_by("seq").last().occurred_at
    assert (memory.source_turn_seqs, memory.compiler) == (seqs, "openai/fake-model")
    assert memory.occurred_at == last_said
