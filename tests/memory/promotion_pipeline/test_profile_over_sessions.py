"""A user's profile kept across months of sessions by the offline compiler: each session of a
single user's assistant chat is promoted unattended, the facts it states about the user are
kept as standalone statements, and a later session's new job, city, partner or diet retires
the old one, so recall answers with what holds now and ``as_of`` with what held then."""

from datetime import UTC, datetime

import pytest

from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_recall
from apps.memory.services import promotion_request, promotion_run
from tests.memory.promotion_pipeline.conftest import add_turns

pytestmark = pytest.mark.django_db

SUBJECT = "assistant-user"
SESSIONS = [
    (
        datetime(2025, 1, 10, tzinfo=UTC),
        [
            "Hi! Quick intro: I'm a nurse at St. Luke's hospital and I live in Boston with my "
            "boyfriend Tom.",
            "Nice to meet you! How can I help today?",
            "I'm vegetarian, so please only suggest meatless recipes.",
            "Got it, meatless recipes only.",
        ],
    ),
    (
        datetime(2025, 3, 2, tzinfo=UTC),
        [
            "Can you help me plan a weekend trip to Italy?",
            "Sure! Rome or Florence?",
            "Florence, I love art museums.",
            "Sounds lovely.",
            "I volunteer at the animal shelter every Saturday morning, so Sunday flights.",
        ],
    ),
    (
        datetime(2025, 4, 11, tzinfo=UTC),
        [
            "I hurt my knee playing soccer, so no running for a while.",
            "Sorry to hear that, rest up.",
        ],
    ),
    (
        datetime(2025, 5, 20, tzinfo=UTC),
        [
            "Big news: I left the hospital and now work as a data analyst at Globex.",
            "Congratulations on the new job!",
        ],
    ),
    (
        datetime(2025, 7, 8, tzinfo=UTC),
        ["I moved to Denver last week, the mountains are amazing.", "Welcome to Colorado!"],
    ),
    (
        datetime(2025, 9, 14, tzinfo=UTC),
        ["Tom and I broke up last month. It's been hard.", "I'm sorry to hear that."],
    ),
    (
        datetime(2025, 11, 3, tzinfo=UTC),
        [
            "I'm dating Alex now.",
            "That's lovely!",
            "Also, I started eating meat again, so chicken recipes are fine now.",
            "Noted!",
            "My knee has fully healed. I stopped volunteering at the shelter, though.",
        ],
    ),
]


@pytest.fixture
def history(tenant, settings):
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 100
    for number, (when, contents) in enumerate(SESSIONS):
        session_id = f"chat-{number}"
        add_turns(tenant, SUBJECT, session_id, *contents, occurred_at=when)
        request = promotion_request(tenant=tenant, subject_id=SUBJECT, session_id=session_id)
        assert request.job_id is not None
        promotion_run(job_id=request.job_id)
    return Memory.objects.filter(tenant=tenant, subject_id=SUBJECT, source=MemorySource.PROMOTED)


def _holding(memories, *words):
    return [m for m in memories if all(word.lower() in m.text.lower() for word in words)]


def test_each_change_retires_the_fact_it_changed(history):
    live = list(history.filter(superseded_by__isnull=True))
    retired = list(history.filter(superseded_by__isnull=False))

    # What holds now, each a statement of its own.
    for current in ("Globex", "Denver", "dating Alex", "eating meat again", "knee has fully"):
        assert _holding(live, current), current
    # What it replaced: none of it is live, every version of it retired by a change.
    for stale in ("nurse", "Boston", "vegetarian", "broke up", "hurt", "every Saturday"):
        assert not _holding(live, stale), stale
        assert _holding(retired, stale), stale
    replacements = Memory.objects.filter(pk__in=[m.superseded_by_id for m in retired])
    assert {m.supersede_reason.split(":")[0] for m in replacements} == {"changed_value"}


def test_a_compound_intro_is_kept_as_facts_that_stand_alone(history):
    texts = [m.text for m in history]

    assert "The user is a nurse at St. Luke's hospital." in texts
    assert "The user lives in Boston with their boyfriend Tom." in texts


@pytest.mark.parametrize(
    ("question", "now", "then"),
    [
        ("What is the user's current occupation?", "Globex", "nurse"),
        ("Where does the user live?", "Denver", "Boston"),
        ("What is the user's diet?", "eating meat again", "vegetarian"),
    ],
)
def test_recall_answers_what_holds_now_and_as_of_what_held_then(
    tenant, history, question, now, then
):
    current = [
        hit.memory.text
        for hit in memory_recall(tenant=tenant, subject_id=SUBJECT, query=question).results
    ]
    earlier = [
        hit.memory.text
        for hit in memory_recall(
            tenant=tenant,
            subject_id=SUBJECT,
            query=question,
            as_of=datetime(2025, 2, 1, tzinfo=UTC),
        ).results
    ]

    assert any(now in text for text in current)
    assert not any(then in text for text in current)
    assert any(then in text for text in earlier)
    assert not any(now in text for text in earlier)
