"""A fact that ended hours into a question's window did not hold "in" it: of a job replaced on
1 September at ten, "in September" asks about the new one, "in August" about the old."""

from datetime import UTC, datetime

import pytest

from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_supersede
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

NURSE = "Maria works as a nurse at the hospital."
ANALYST = "Maria works as a data analyst at Globex."


@pytest.fixture
def career(tenant):
    nurse = remember(tenant, "a", NURSE, occurred_at=datetime(2025, 1, 15, tzinfo=UTC))
    remember(tenant, "a", "Maria enjoys hiking on weekends.")
    analyst = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=nurse.pk,
        draft=MemoryDraft(text=ANALYST, occurred_at=datetime(2025, 9, 1, 10, tzinfo=UTC)),
    )
    memory_embed_pending(memory_ids=[str(analyst.pk)])


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Where did Maria work in September 2025?", ANALYST),
        ("Where did Maria work in August 2025?", NURSE),
        # A window of one day: ten hours of it is a share worth counting.
        ("Where did Maria work on 1 September 2025?", None),
    ],
)
def test_an_ended_fact_counts_only_for_what_it_held_of_the_window(tenant, career, question, first):
    result = memory_recall(tenant=tenant, subject_id="a", query=question)
    texts = [hit.memory.text for hit in result.results]

    preferred = texts[: result.meta["time_window"]["preferred"]]
    if first is None:
        assert {NURSE, ANALYST} <= set(preferred)
    else:
        assert preferred[0] == first
        assert ({NURSE, ANALYST} - {first}) & set(preferred) == set()
