"""An event in place of a time, through the real endpoints: "where did Maria work before the
move?" ends the window where the subject's memory of the move places it; an event the subject
has no memory of names no window; another subject's memories never place it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
NURSE = "Maria works as a nurse at St. Luke's hospital."
MOVE = "Maria moved to Denver with her sister."
GLOBEX = "Maria now works at Globex as a data analyst."
HIKE = "Maria went hiking in the Rockies."
MARCH, JUNE, SEPTEMBER = (datetime(2025, month, 1, tzinfo=UTC) for month in (3, 6, 9))


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _at(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _texts(body: dict) -> list[str]:
    return [hit["memory"]["text"] for hit in body["data"]]


@pytest.fixture
def moved(agent, other_agent):
    """Maria a nurse in March, moved in June, at Globex in September (the nurse memory
    retired by the change); another agent of the tenant knows Maria as a teacher, no move."""
    agent.post(MEMORY, {"text": NURSE, "occurred_at": _at(MARCH)})
    move = agent.post(MEMORY, {"text": MOVE, "occurred_at": _at(JUNE)}).json()
    agent.post(MEMORY, {"text": GLOBEX, "occurred_at": _at(SEPTEMBER)})
    agent.post(MEMORY, {"text": HIKE, "occurred_at": _at(SEPTEMBER)})
    other_agent.post(MEMORY, {"text": "Maria works as a teacher.", "occurred_at": _at(MARCH)})
    memory_embed_pending(memory_ids=[str(pk) for pk in Memory.objects.values_list("pk", flat=True)])
    return move["data"]["id"]


def test_before_the_event_ranks_what_held_until_it_first(agent, moved):
    body = agent.post(RECALL, {"query": "Where did Maria work before the move?"}).json()

    assert _texts(body)[0] == NURSE
    assert body["data"][0]["validity"] == "superseded"
    assert body["meta"]["time_window"] == {
        "start": None,
        "end": _at(JUNE),
        "phrase": "before the move",
        "preferred": 1,
        "anchor": moved,
    }


def test_after_the_event_ranks_what_began_from_it_first(agent, moved):
    body = agent.post(RECALL, {"query": "Where did Maria work after the move?"}).json()

    assert _texts(body)[0] == GLOBEX
    # The nurse job still held for a while after the move, so it is in the window too.
    assert _texts(body).index(GLOBEX) < _texts(body).index(NURSE)
    assert _texts(body)[-1] == MOVE  # the event itself is not what came after it
    assert body["meta"]["time_window"]["start"] == _at(JUNE)
    assert body["meta"]["time_window"]["anchor"] == moved


def test_an_event_the_subject_has_no_memory_of_names_no_window(agent, moved):
    plain = agent.post(RECALL, {"query": "Where did Maria work?"}).json()
    body = agent.post(RECALL, {"query": "Where did Maria work before the wedding?"}).json()

    assert body["meta"]["time_window"] is None
    assert _texts(body)[0] == _texts(plain)[0] == GLOBEX


def test_time_words_win_over_an_event(agent, moved):
    body = agent.post(RECALL, {"query": "Where did Maria work before May 2025?"}).json()

    assert body["meta"]["time_window"]["phrase"] == "before May 2025"
    assert body["meta"]["time_window"]["anchor"] is None
    assert _texts(body)[0] == NURSE


def test_another_subjects_memory_never_places_the_event(agent, other_agent, foreign_agent, moved):
    for caller in (other_agent, foreign_agent):
        body = caller.post(RECALL, {"query": "Where did Maria work before the move?"}).json()

        assert body["meta"]["time_window"] is None
        assert NURSE not in _texts(body)
        assert MOVE not in _texts(body)


def test_merged_recall_anchors_its_memory_half(agent, moved):
    body = agent.post(MERGED, {"query": "Where did Maria work before the move?"}).json()

    assert body["meta"]["time_window"]["anchor"] == moved
    assert body["memory"]["results"][0]["memory"]["text"] == NURSE


def test_event_anchors_are_off_with_time_words(agent, moved, settings):
    settings.MEMORY_RECALL_TIME_WORDS = False

    body = agent.post(RECALL, {"query": "Where did Maria work before the move?"}).json()

    assert body["meta"]["time_window"] is None
    assert NURSE not in _texts(body)
