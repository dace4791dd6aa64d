"""A question about what used to be ("Where did Maria use to work?") reads every version and
puts what was replaced above what replaced it; the same question without those words, or with
a time of its own, reads as before."""

from datetime import UTC, datetime

import pytest

from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_supersede
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

NURSE = "Maria works as a nurse at the hospital."
ANALYST = "Maria works as a data analyst at Globex."
HIKING = "Maria enjoys hiking on weekends."


def _texts(tenant, query, subject="a"):
    return [
        (hit.memory.text, hit.validity)
        for hit in memory_recall(tenant=tenant, subject_id=subject, query=query).results
    ]


@pytest.fixture
def career(tenant):
    nurse = remember(tenant, "a", NURSE, occurred_at=datetime(2025, 1, 15, tzinfo=UTC))
    remember(tenant, "a", HIKING, occurred_at=datetime(2025, 4, 1, tzinfo=UTC))
    analyst = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=nurse.pk,
        draft=MemoryDraft(text=ANALYST, occurred_at=datetime(2025, 9, 1, tzinfo=UTC)),
    )
    memory_embed_pending(memory_ids=[str(analyst.pk)])
    # Another subject's history never comes back.
    remember(tenant, "b", "Maria works as a nurse at the clinic.")


@pytest.mark.parametrize(
    "query",
    [
        "Where did Maria use to work?",
        "Where did Maria work before?",
        "What was Maria's previous job?",
        "What was Maria's old job?",
    ],
)
def test_the_replaced_value_comes_first(tenant, career, query):
    texts = _texts(tenant, query)

    assert texts.index((NURSE, "superseded")) < texts.index((ANALYST, "current"))
    assert ("Maria works as a nurse at the clinic.", "current") not in texts


def test_a_question_about_now_leaves_the_replaced_value_out(tenant, career):
    texts = [text for text, _validity in _texts(tenant, "Where does Maria work?")]

    assert texts[0] == ANALYST
    assert NURSE not in texts
