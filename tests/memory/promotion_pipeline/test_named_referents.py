"""A pet or a person named alone in a later session is kept as whose it is: "Biscuit died" is
stored as the user's golden retriever's death, which retires the memory that the user has him
and answers a question about the user's dog."""

from datetime import UTC, datetime

import pytest

from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_recall
from apps.memory.services import promotion_request, promotion_run
from tests.memory.promotion_pipeline.conftest import add_turns

pytestmark = pytest.mark.django_db

SUBJECT = "assistant-user"


def _promote(tenant, session_id, *contents, when):
    add_turns(tenant, SUBJECT, session_id, *contents, occurred_at=when)
    request = promotion_request(tenant=tenant, subject_id=SUBJECT, session_id=session_id)
    assert request.job_id is not None
    promotion_run(job_id=request.job_id)


@pytest.fixture
def promoted(tenant, settings):
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 100
    _promote(
        tenant,
        "intro",
        "A bit about me: I work as a paralegal and we have a golden retriever named Biscuit.",
        "Nice to meet you both!",
        when=datetime(2025, 1, 13, tzinfo=UTC),
    )
    _promote(
        tenant,
        "later",
        "Biscuit died last week, he was fourteen. The house feels so empty.",
        "I'm so sorry for your loss.",
        when=datetime(2026, 2, 15, tzinfo=UTC),
    )
    return Memory.objects.filter(tenant=tenant, subject_id=SUBJECT, source=MemorySource.PROMOTED)


def test_the_name_is_kept_with_whose_it_is_and_retires_what_it_changed(promoted):
    (death,) = [m for m in promoted if "died" in m.text]
    (had,) = [m for m in promoted if "named Biscuit" in m.text]

    assert death.text.startswith("The user's golden retriever Biscuit died")
    assert had.superseded_by_id == death.pk
    assert death.supersede_reason.startswith("changed_value")


def test_a_question_about_the_users_golden_retriever_finds_what_became_of_him(tenant, promoted):
    hits = [
        hit.memory.text
        for hit in memory_recall(
            tenant=tenant, subject_id=SUBJECT, query="Does the user have a golden retriever?"
        ).results
    ]

    assert "Biscuit died" in hits[0]
    assert not any("named Biscuit" in text for text in hits)  # retired: not what holds now


def test_another_subjects_introduction_names_no_one_here(tenant, other_tenant, settings):
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 100
    when = datetime(2025, 1, 13, tzinfo=UTC)
    for owner_tenant, subject in ((tenant, "another-user"), (other_tenant, SUBJECT)):
        add_turns(
            owner_tenant,
            subject,
            "intro",
            "We have a golden retriever named Biscuit.",
            "Lovely!",
            occurred_at=when,
        )
        request = promotion_request(tenant=owner_tenant, subject_id=subject, session_id="intro")
        assert request.job_id is not None
        promotion_run(job_id=request.job_id)

    introductions = Memory.objects.filter(text__contains="golden retriever named Biscuit")
    assert introductions.count() == 2  # one in each of the other scopes

    _promote(
        tenant,
        "later",
        "Biscuit died last week, he was fourteen.",
        "I'm so sorry.",
        when=datetime(2026, 2, 15, tzinfo=UTC),
    )

    (death,) = Memory.objects.filter(tenant=tenant, subject_id=SUBJECT, text__contains="died")
    assert death.text.startswith("Biscuit died")
