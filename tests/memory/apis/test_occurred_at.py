"""Event time (``occurred_at``) and promotion provenance on the memory APIs."""

import pytest
from django.utils import timezone

from apps.memory.models import Memory, SessionMemory

MEMORY = "/api/v1/memory"
BATCH = "/api/v1/memory/batch"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def test_a_memory_written_with_occurred_at_returns_it(agent):
    response = agent.post(MEMORY, {"text": "Went hiking", "occurred_at": "2023-05-07T09:30:00Z"})

    body = response.json()["data"]
    assert response.status_code == 201
    assert body["occurred_at"] == "2023-05-07T09:30:00Z"
    assert (body["source_turn_seqs"], body["compiler"]) == ([], "")
    stored = Memory.objects.get(pk=body["id"])
    assert stored.occurred_at.isoformat() == "2023-05-07T09:30:00+00:00"
    listed = agent.get(MEMORY).json()["data"]
    assert [m["occurred_at"] for m in listed] == ["2023-05-07T09:30:00Z"]


def test_without_occurred_at_a_memory_happened_when_written(agent):
    before = timezone.now()
    body = agent.post(MEMORY, {"text": "Prefers tea"}).json()["data"]
    after = timezone.now()

    stored = Memory.objects.get(pk=body["id"])
    assert before <= stored.occurred_at <= after


def test_session_turns_carry_occurred_at_through_write_and_history(agent):
    said = "2023-05-08T13:56:00+02:00"
    first = agent.post(
        MEMORY,
        {
            "tier": "session",
            "session_id": "s1",
            "content": "I went to a support group yesterday",
            "ttl_seconds": 600,
            "occurred_at": said,
        },
    ).json()["data"]
    batch = agent.post(
        BATCH,
        {"items": [{"tier": "session", "session_id": "s1", "content": "Nice", "ttl_seconds": 600}]},
    ).json()["data"]

    history = agent.get(f"{MEMORY}/sessions/s1").json()["data"]
    assert first["occurred_at"] == "2023-05-08T11:56:00Z"
    assert [turn["occurred_at"] for turn in history] == [
        "2023-05-08T11:56:00Z",
        batch[0]["occurred_at"],
    ]
    second = SessionMemory.objects.get(seq=batch[0]["seq"])
    assert second.occurred_at == second.created_at or (
        abs((second.occurred_at - second.created_at).total_seconds()) < 1
    )


@pytest.mark.parametrize(
    "body",
    [
        {"text": "x", "occurred_at": "yesterday"},
        {"text": "x", "occurred_at": 12},
        {
            "tier": "session",
            "session_id": "s",
            "content": "c",
            "ttl_seconds": 60,
            "occurred_at": "",
        },
    ],
)
def test_a_bad_occurred_at_is_refused_before_any_write(agent, body):
    response = agent.post(MEMORY, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert Memory.objects.count() == 0
    assert SessionMemory.objects.count() == 0
