"""A question about how an attribute of someone stands prefers, within the ranking's head,
the memories that state that attribute (of the person it names), and changes nothing for any
other question."""

from datetime import UTC, datetime

import pytest

from apps.memory.selectors import memory_recall
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


def test_without_late_interaction_the_asked_attribute_still_comes_first(tenant, profile, settings):
    settings.MEMORY_RECALL_RERANK_CANDIDATES = 0

    assert _texts(tenant, "What is the user's current occupation?")[0] == JOB


def test_off_the_ranking_stands(tenant, profile, settings):
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 0

    on_the_test_embedder = _texts(tenant, "What is the user's current occupation?")

    assert on_the_test_embedder[0] != JOB


def test_a_question_about_an_event_keeps_the_ranking(tenant, profile, settings):
    event = "When did the user start the job at Globex?"
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 0
    off = _texts(tenant, event)
    settings.MEMORY_RECALL_ATTRIBUTE_FIRST = 3

    assert _texts(tenant, event) == off


def test_the_users_own_words_state_the_users_attribute(tenant, settings):
    # "I work at …", stored as the user said it, is the user's job; the third-person memory
    # beside it states no job.
    remember(tenant, "a", "The user enjoys hiking on weekends.", occurred_at=WHEN)
    remember(tenant, "a", "I work at Deloitte as an auditor.", occurred_at=WHEN)

    assert _texts(tenant, "What is the user's current job?")[0] == (
        "I work at Deloitte as an auditor."
    )
