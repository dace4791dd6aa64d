"""A question about how an attribute of someone stands prefers, within the ranking's head,
the memories that state that attribute (of the person it names), and changes nothing for any
other question."""

import uuid
from datetime import UTC, datetime

import pytest

from apps.memory.selectors import memory_recall
from apps.memory.selectors.recall.attributes import (
    prefer_stated_attribute,
    states_asked_attribute,
)
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

JOB = "The user left the hospital and now works as a data analyst at Globex."
PARTNER = "The user is dating Alex now."
WHEN = datetime(2025, 5, 1, tzinfo=UTC)


def _texts(tenant, query, subject="a"):
    return [
        hit.memory.text
        for hit in memory_recall(tenant=tenant, subject_id=subject, query=query).results
    ]


@pytest.fixture
def profile(tenant):
    remember(tenant, "a", PARTNER, occurred_at=WHEN)
    remember(tenant, "a", JOB, occurred_at=WHEN)
    remember(tenant, "a", "The user moved to Denver, the mountains are amazing.", occurred_at=WHEN)
    remember(tenant, "a", "The user started eating meat again.", occurred_at=WHEN)


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What is the user's current occupation?", JOB),
        ("What is the user's relationship status now?", PARTNER),
        ("Where does the user live now?", "The user moved to Denver, the mountains are amazing."),
        ("What diet does the user follow?", "The user started eating meat again."),
    ],
)
def test_the_memory_that_states_the_asked_attribute_comes_first(tenant, profile, question, first):
    assert _texts(tenant, question)[0] == first


def test_off_the_ranking_stands(tenant, profile, settings):
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 0

    on_the_test_embedder = _texts(tenant, "What is the user's current occupation?")

    assert on_the_test_embedder[0] != JOB


@pytest.mark.parametrize(
    ("text", "whose", "states"),
    [
        ("Maria works as a nurse at St. Luke's hospital.", {"maria"}, True),
        ("Tom works as a chef at Luigi's.", {"maria"}, False),
        ("Tom works as a chef at Luigi's.", set(), True),  # the question names no one
        ("The user works as a chef at Luigi's.", {"user"}, True),
        ("Maria adopted a puppy.", {"maria"}, False),  # pets, not a job
    ],
)
def test_a_memory_states_the_asked_attribute_only_of_the_person_asked_about(text, whose, states):
    assert states_asked_attribute(text, frozenset({"employer", "role"}), frozenset(whose)) is states


def test_only_the_first_few_stating_memories_move_and_the_rest_keep_their_order(settings):
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 2
    ids = [uuid.uuid4() for _ in range(5)]
    texts = dict(
        zip(
            ids,
            [
                "The user likes tea.",
                "The user works at Acme.",
                "The user enjoys hiking.",
                "The user is a nurse.",
                "The user works at Globex.",
            ],
            strict=True,
        )
    )
    ranked = [(pk, 1.0 - index / 10) for index, pk in enumerate(ids)]

    order = prefer_stated_attribute("What is the user's current job?", ranked, texts)

    assert [pk for pk, _score in order] == [ids[1], ids[3], ids[0], ids[2], ids[4]]
    assert prefer_stated_attribute("What did the user eat?", ranked, texts) == ranked


def test_a_question_about_an_event_keeps_the_ranking(tenant, profile, settings):
    event = "When did the user start the job at Globex?"
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 0
    off = _texts(tenant, event)
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 3

    assert _texts(tenant, event) == off
