"""Time words in a recall's question, through the real endpoints: "where did Maria work last
spring?" ranks what held then first, the plain question what holds now; a window nothing falls
in changes nothing; only ever the caller's own memories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.extraction.time_words import time_window
from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
PLAIN = "Where does Maria work?"
THEN = "Where did Maria work last spring?"
NURSE = "Maria works as a nurse at the city hospital."
GLOBEX = "Maria now works at Globex as a data analyst."
ALPS = "Maria went hiking in the Alps."
NORWAY = "Maria went hiking in Norway."


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _embed_all():
    memory_embed_pending(memory_ids=[str(pk) for pk in Memory.objects.values_list("pk", flat=True)])


def _at(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture
def spring():
    """Last spring, as the endpoint will read it (relative to now)."""
    window = time_window(THEN, reference=timezone.now())
    assert window is not None
    assert window.start is not None
    assert window.end is not None
    return window


@pytest.fixture
def job_change(agent, other_agent, foreign_agent, spring):
    """Maria a nurse from before last spring, at Globex only after it (the change detector
    retires the nurse memory); hiking in the Alps last spring and in Norway after it, both
    live; another subject's and another tenant's Maria a teacher throughout last spring."""
    # After the window, and never in the future, whenever the test runs.
    changed = min(spring.end + timedelta(days=30), timezone.now() - timedelta(hours=1))
    during = spring.start + timedelta(days=20)
    agent.post(MEMORY, {"text": NURSE, "occurred_at": _at(spring.start - timedelta(days=60))})
    agent.post(
        MEMORY,
        {
            "text": "Maria enjoys hiking in the mountains.",
            "occurred_at": _at(spring.start - timedelta(days=90)),
        },
    )
    agent.post(MEMORY, {"text": GLOBEX, "occurred_at": _at(changed)})
    agent.post(MEMORY, {"text": ALPS, "occurred_at": _at(during)})
    agent.post(MEMORY, {"text": NORWAY, "occurred_at": _at(changed)})
    for caller in (other_agent, foreign_agent):
        caller.post(
            MEMORY, {"text": "Maria worked as a teacher last spring.", "occurred_at": _at(during)}
        )
    _embed_all()


def _texts(body: dict) -> list[str]:
    return [hit["memory"]["text"] for hit in body["data"]]


def test_the_question_of_last_spring_ranks_what_held_then_first(agent, job_change, spring):
    plain = agent.post(RECALL, {"query": PLAIN}).json()
    then = agent.post(RECALL, {"query": THEN}).json()

    assert _texts(plain)[0] == GLOBEX
    assert NURSE not in _texts(plain)  # retired: recall without a window reads live rows
    assert plain["meta"]["time_window"] is None
    assert _texts(then)[0] == NURSE
    assert then["data"][0]["validity"] == "superseded"
    assert then["data"][0]["memory"]["superseded_by"] is not None
    assert GLOBEX in _texts(then)  # a preference, not a filter
    assert then["meta"]["time_window"] == {
        "start": _at(spring.start),
        "end": _at(spring.end),
        "phrase": "last spring",
        # The nurse job, which ended since, and the hiking then; not the liking for hiking,
        # which began before the window and still holds.
        "preferred": 2,
        "anchor": None,
    }


def test_of_two_live_memories_the_one_that_happened_in_the_window_comes_first(agent, job_change):
    then = _texts(agent.post(RECALL, {"query": "Where did Maria go hiking last spring?"}).json())
    later = _texts(agent.post(RECALL, {"query": "Where did Maria go hiking last year?"}).json())

    assert then.index(ALPS) < then.index(NORWAY)
    assert {ALPS, NORWAY} <= set(later)


def test_the_window_prefers_rows_it_covers_in_every_mode(agent, job_change):
    for mode in ("semantic", "keyword"):
        texts = _texts(agent.post(RECALL, {"query": THEN, "mode": mode}).json())

        assert texts.index(NURSE) < texts.index(GLOBEX), mode


def test_merged_recall_reports_and_applies_the_window_to_its_memory_half(agent, job_change):
    body = agent.post(MERGED, {"query": THEN}).json()

    assert body["meta"]["time_window"]["phrase"] == "last spring"
    memory_half = [hit["memory"]["text"] for hit in body["memory"]["results"]]
    assert memory_half[0] == NURSE
    assert body["memory"]["meta"]["time_window"] == body["meta"]["time_window"]
    assert agent.post(MERGED, {"query": PLAIN}).json()["meta"]["time_window"] is None


def test_a_window_nothing_falls_in_changes_nothing(agent, job_change, mocker):
    query = "Where did Maria work in 1999?"
    with_window = agent.post(RECALL, {"query": query}).json()
    # The same question read with no time words at all (the resolver is pure text).
    mocker.patch("apps.memory.selectors.recall.time_window", return_value=None)
    without = agent.post(RECALL, {"query": query}).json()

    assert with_window["meta"]["time_window"]["preferred"] == 0
    assert with_window["meta"]["time_window"]["end"] == "2000-01-01T00:00:00Z"
    assert [(h["memory"]["id"], h["score"]) for h in with_window["data"]] == [
        (h["memory"]["id"], h["score"]) for h in without["data"]
    ]
    assert NURSE not in _texts(with_window)


def test_the_present_names_no_window(agent, job_change):
    body = agent.post(RECALL, {"query": "Where does Maria work now?"}).json()

    assert body["meta"]["time_window"] is None
    assert _texts(body)[0] == GLOBEX


def test_another_subjects_or_tenants_memory_in_the_window_never_appears(
    agent, other_agent, foreign_agent, job_change
):
    for caller in (agent, other_agent, foreign_agent):
        body = caller.post(RECALL, {"query": THEN, "limit": 50}).json()
        merged = caller.post(MERGED, {"query": THEN, "limit": 50}).json()
        texts = _texts(body) + [item.get("text") for item in merged["data"]]

        if caller is agent:
            assert "Maria worked as a teacher last spring." not in texts
        else:
            assert texts.count("Maria worked as a teacher last spring.") == 2
            assert NURSE not in texts
            assert GLOBEX not in texts


def test_the_window_is_read_relative_to_as_of(agent, job_change, spring):
    # A year after last spring's end, "last spring" is last spring again; as_of reads only
    # what held at that instant, so the window ranks among those rows.
    as_of = spring.end + timedelta(days=10)
    body = agent.post(RECALL, {"query": THEN, "as_of": _at(as_of)}).json()

    window = time_window(THEN, reference=as_of)
    assert window is not None
    assert body["meta"]["time_window"]["start"] == _at(window.start)
    assert body["meta"]["as_of"] == _at(as_of)


def test_only_the_windows_best_go_first(agent, job_change, settings):
    settings.MEMORY_RECALL_TIME_WINDOW_FIRST = 1

    body = agent.post(RECALL, {"query": THEN}).json()

    assert _texts(body)[0] == NURSE
    assert body["meta"]["time_window"]["preferred"] == 1
    # The hiking then is in the window too, but past the first place it ranks as usual.
    assert ALPS in _texts(body)


def test_time_words_can_be_turned_off(agent, job_change, settings):
    settings.MEMORY_RECALL_TIME_WORDS = False

    body = agent.post(RECALL, {"query": THEN}).json()

    assert body["meta"]["time_window"] is None
    assert NURSE not in _texts(body)


def test_a_range_of_months_ranks_what_happened_between_them_first(agent):
    for text, when in (
        ("Sam went hiking in the Alps.", datetime(2023, 3, 10, tzinfo=UTC)),
        ("Sam went hiking in Norway.", datetime(2023, 6, 12, tzinfo=UTC)),
        ("Sam went hiking in Patagonia.", datetime(2023, 10, 2, tzinfo=UTC)),
    ):
        agent.post(MEMORY, {"text": text, "occurred_at": _at(when)})
    _embed_all()

    body = agent.post(RECALL, {"query": "Where did Sam go hiking between May and July 2023?"})

    assert body.status_code == 200
    assert _texts(body.json())[0] == "Sam went hiking in Norway."
    assert body.json()["meta"]["time_window"] == {
        "start": "2023-05-01T00:00:00Z",
        "end": "2023-08-01T00:00:00Z",
        "phrase": "between May and July 2023",
        "preferred": 1,
        "anchor": None,
    }
