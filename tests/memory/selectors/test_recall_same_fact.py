"""For a question about how things stand now, of two live hits that say nearly the same thing
the later fact first (``MEMORY_RECALL_SAME_FACT_SIMILARITY``; above 1: off), only within the
ranking's head, never a promoted memory above an explicit one, and never across subjects. A
question about an event keeps the ranking's order."""

from datetime import UTC, datetime

import pytest

from apps.memory.models import MemorySource
from apps.memory.selectors import memory_recall
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

QUERY = "Is Melanie doing pottery these days?"
FAN = "Melanie does pottery these days."
BREAK = "Melanie took a break from pottery."
MARCH = datetime(2023, 3, 1, tzinfo=UTC)
AUGUST = datetime(2023, 8, 1, tzinfo=UTC)
# Between the two pottery memories' vectors and above the violin's, on the test embedder.
SIMILAR = 0.35


def _texts(tenant, subject="a", query=QUERY):
    return [
        hit.memory.text
        for hit in memory_recall(tenant=tenant, subject_id=subject, query=query).results
    ]


@pytest.fixture
def pottery(tenant):
    remember(tenant, "a", FAN, occurred_at=MARCH)
    remember(tenant, "a", BREAK, occurred_at=AUGUST)
    remember(tenant, "a", "Melanie's son plays the violin.", occurred_at=AUGUST)
    # Another subject's later pottery news never takes part.
    remember(tenant, "b", "Melanie went back to pottery classes.", occurred_at=AUGUST)


def test_off_the_ranking_stands(tenant, pottery, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = 2.0

    texts = _texts(tenant)

    assert texts.index(FAN) < texts.index(BREAK)


def test_a_question_about_an_event_keeps_the_ranking(tenant, pottery, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR

    texts = _texts(tenant, query="When did Melanie do pottery?")

    assert texts.index(FAN) < texts.index(BREAK)


def test_on_the_later_of_two_similar_hits_comes_first(tenant, pottery, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR

    texts = _texts(tenant)

    assert texts.index(BREAK) < texts.index(FAN)
    assert "Melanie went back to pottery classes." not in texts


def test_only_the_head_is_reordered(tenant, pottery, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR
    settings.MEMORY_RECALL_SAME_FACT_HEAD = 1

    texts = _texts(tenant)

    assert texts.index(FAN) < texts.index(BREAK)


def test_a_promoted_memory_never_goes_above_an_explicit_one(tenant, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR
    remember(tenant, "a", FAN, occurred_at=MARCH)
    remember(tenant, "a", BREAK, occurred_at=AUGUST, source=MemorySource.PROMOTED)

    texts = _texts(tenant)

    assert texts.index(FAN) < texts.index(BREAK)


def test_a_later_memory_of_someone_else_stays_below(tenant, settings):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR
    remember(tenant, "a", "Alice works at the Acme office.", occurred_at=MARCH)
    remember(tenant, "a", "Bob works at the Acme office now.", occurred_at=AUGUST)

    texts = _texts(tenant, query="Where does Alice work?")

    assert texts.index("Alice works at the Acme office.") < texts.index(
        "Bob works at the Acme office now."
    )


SHOWED = "Melanie does pottery with her friends."


@pytest.mark.parametrize(
    ("later", "query", "later_first"),
    [
        # Asked how things stand: the later of the two first, whatever it says.
        (SHOWED, QUERY, True),
        # Asked merely in the present: only a later memory that says the fact changed.
        (BREAK, "Does Melanie do pottery?", True),
        (SHOWED, "Does Melanie do pottery?", False),
    ],
)
def test_a_question_in_the_present_puts_only_a_change_first(
    tenant, settings, later, query, later_first
):
    settings.MEMORY_RECALL_SAME_FACT_SIMILARITY = SIMILAR
    remember(tenant, "a", FAN, occurred_at=MARCH)
    remember(tenant, "a", later, occurred_at=AUGUST)

    texts = _texts(tenant, query=query)

    assert (texts.index(later) < texts.index(FAN)) is later_first
