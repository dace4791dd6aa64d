"""Recall at a valid time (``as_of``): the memories whose fact held then, in every mode and in
the fallback, filtered inside the guarded scope (never after a top-k cut), and never another
subject's, tenant's or project's, nor anything forgotten or erased."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.core.heavy_read import heavy_read_slot
from apps.dataops.services import erase_subject
from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_list, memory_recall
from apps.memory.services import (
    MemoryDraft,
    memory_embed_pending,
    memory_flag_conflict,
    memory_forget,
    memory_supersede,
)
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

MARCH = datetime(2024, 3, 1, tzinfo=UTC)
JUNE = datetime(2024, 6, 1, tzinfo=UTC)
SEPTEMBER = datetime(2024, 9, 1, tzinfo=UTC)
MODES = ["semantic", "keyword", "hybrid"]
QUERY = "which city does the user live in"


def _texts(result):
    return [hit.memory.text for hit in result.results]


def _supersede(tenant, old, text, when, subject="a"):
    new = memory_supersede(
        tenant=tenant,
        subject_id=subject,
        memory_id=old.pk,
        draft=MemoryDraft(text=text, occurred_at=when),
    )
    memory_embed_pending(memory_ids=[str(new.pk)])
    return new


@pytest.fixture
def chain(tenant):
    """Berlin (March) → Lisbon (June) → Porto (September), each replacing the one before."""
    berlin = remember(tenant, "a", "The user lives in the city of Berlin.", occurred_at=MARCH)
    lisbon = _supersede(tenant, berlin, "The user lives in the city of Lisbon.", JUNE)
    porto = _supersede(tenant, lisbon, "The user lives in the city of Porto.", SEPTEMBER)
    return berlin, lisbon, porto


@pytest.fixture
def neighbours(tenant, other_tenant):
    """The same facts, valid at the same times, owned by someone else each time."""
    project = ProjectFactory.create(tenant=tenant)
    remember(tenant, "b", "The user lives in the city of Madrid.", occurred_at=MARCH)
    remember(other_tenant, "a", "The user lives in the city of Rome.", occurred_at=MARCH)
    remember(
        tenant, "a", "The user lives in the city of Oslo.", occurred_at=MARCH, project_id=project.pk
    )
    return project


def _break_embeddings(tenant):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("_case", "as_of", "expected"),
    [
        ("before_anything", MARCH - timedelta(days=1), []),
        ("spring", MARCH + timedelta(days=10), ["The user lives in the city of Berlin."]),
        ("the_change_itself", JUNE, ["The user lives in the city of Lisbon."]),
        ("summer", JUNE + timedelta(days=10), ["The user lives in the city of Lisbon."]),
        ("autumn", SEPTEMBER + timedelta(days=10), ["The user lives in the city of Porto."]),
    ],
)
def test_as_of_returns_the_version_of_a_chain_that_held_then(
    tenant, chain, neighbours, mode, _case, as_of, expected
):
    result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, mode=mode, as_of=as_of)

    assert _texts(result) == expected
    assert result.meta["as_of"] == as_of.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("mode", MODES)
def test_without_as_of_only_the_live_version_is_recalled(tenant, chain, neighbours, mode):
    result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, mode=mode)

    assert _texts(result) == ["The user lives in the city of Porto."]
    assert [hit.validity for hit in result.results] == ["current"]
    assert result.meta["as_of"] is None


def test_as_of_reads_the_project_partition_like_any_recall(tenant, chain, neighbours):
    result = memory_recall(
        tenant=tenant,
        subject_id="a",
        query=QUERY,
        project_id=neighbours.pk,
        as_of=MARCH + timedelta(days=1),
    )

    assert sorted(_texts(result)) == [
        "The user lives in the city of Berlin.",
        "The user lives in the city of Oslo.",
    ]


@pytest.mark.parametrize("mode", MODES)
def test_the_fallback_applies_as_of_in_its_scope_too(tenant, chain, neighbours, mode):
    _break_embeddings(tenant)

    result = memory_recall(
        tenant=tenant, subject_id="a", query=QUERY, mode=mode, as_of=JUNE + timedelta(days=1)
    )

    assert result.meta["fallback"] is (mode != "keyword")
    assert _texts(result) == ["The user lives in the city of Lisbon."]


def test_a_shed_recall_applies_as_of_in_its_fallback_scope(tenant, chain, settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1

    with heavy_read_slot(tenant_id=tenant.pk):
        result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, as_of=MARCH)

    assert result.meta["reason"] == "heavy_read_shed"
    assert _texts(result) == ["The user lives in the city of Berlin."]


@pytest.mark.parametrize("mode", MODES)
def test_as_of_is_filtered_before_the_top_k_cut(tenant, mode):
    """Twelve memories that hold now rank above the one that held in March; a filter applied
    after cutting the top one would return nothing."""
    remember(tenant, "a", "The user's city of residence was Berlin.", occurred_at=MARCH)
    for number in range(12):
        remember(
            tenant,
            "a",
            f"The user lives in the city of Porto, in district {number}.",
            occurred_at=SEPTEMBER,
        )

    result = memory_recall(
        tenant=tenant, subject_id="a", query=QUERY, mode=mode, limit=1, as_of=JUNE
    )

    assert _texts(result) == ["The user's city of residence was Berlin."]


@pytest.mark.parametrize("mode", MODES)
def test_a_fact_superseded_since_ranks_as_it_scores_among_what_held_then(tenant, mode):
    """In June the nurse job held and answers the question best. That another job replaced it
    in September says nothing about June, so it does not go behind an unrelated memory."""
    nurse = remember(
        tenant, "a", "Maria works as a nurse at St. Luke's hospital.", occurred_at=MARCH
    )
    remember(tenant, "a", "The user works out at the gym on weekends.", occurred_at=MARCH)
    _supersede(tenant, nurse, "Maria now works as a data analyst at Globex.", SEPTEMBER)

    then = memory_recall(
        tenant=tenant, subject_id="a", query="Where does Maria work?", mode=mode, as_of=JUNE
    )
    now = memory_recall(tenant=tenant, subject_id="a", query="Where does Maria work?", mode=mode)

    assert _texts(then) == [
        "Maria works as a nurse at St. Luke's hospital.",
        "The user works out at the gym on weekends.",
    ]
    assert [hit.validity for hit in then.results] == ["superseded", "current"]
    assert _texts(now)[0] == "Maria now works as a data analyst at Globex."


@pytest.mark.parametrize("mode", MODES)
def test_time_words_read_as_of_a_time_reach_a_fact_that_had_ended_by_then(tenant, chain, mode):
    """As of December, "last spring" is March to May: Berlin held then, though by December
    Porto had replaced it, so the window's read is not cut to what held in December."""
    december = datetime(2024, 12, 1, tzinfo=UTC)

    result = memory_recall(
        tenant=tenant,
        subject_id="a",
        query="which city did the user live in last spring",
        mode=mode,
        as_of=december,
    )

    assert _texts(result)[0] == "The user lives in the city of Berlin."
    assert result.meta["time_window"]["start"] == "2024-03-01T00:00:00Z"


def test_a_window_read_as_of_a_time_ends_there(tenant, chain):
    """ "Since March" as of July: Lisbon (June) is in it, Porto (September) is not."""
    result = memory_recall(
        tenant=tenant,
        subject_id="a",
        query="which city has the user lived in since March 2024",
        as_of=datetime(2024, 7, 1, tzinfo=UTC),
    )

    assert "The user lives in the city of Porto." not in _texts(result)
    assert result.meta["time_window"]["end"] == "2024-07-01T00:00:00Z"


@pytest.mark.parametrize("mode", MODES)
def test_a_forgotten_fact_is_gone_at_every_time(tenant, chain, mode):
    berlin, lisbon, porto = chain

    memory_forget(tenant=tenant, subject_id="a", memory_id=porto.pk)

    for as_of in (None, MARCH, JUNE, SEPTEMBER, SEPTEMBER + timedelta(days=365)):
        result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, mode=mode, as_of=as_of)
        assert _texts(result) == []
    assert not Memory.objects.filter(pk__in=[berlin.pk, lisbon.pk, porto.pk]).exists()


def test_an_erased_subject_is_gone_at_every_time(tenant, chain, neighbours):
    erase_subject(tenant=tenant, subject_id="a", requested_by="test")

    for as_of in (None, MARCH, JUNE, SEPTEMBER):
        assert _texts(memory_recall(tenant=tenant, subject_id="a", query=QUERY, as_of=as_of)) == []
        assert memory_list(tenant=tenant, subject_id="a", as_of=as_of).results == []
    # Only the erased subject's rows went.
    assert _texts(memory_recall(tenant=tenant, subject_id="b", query=QUERY, as_of=MARCH)) == [
        "The user lives in the city of Madrid."
    ]


def test_include_superseded_lists_what_still_holds_first_and_says_what_was_replaced(tenant, chain):
    result = memory_recall(
        tenant=tenant, subject_id="a", query=QUERY, mode="keyword", include_superseded=True
    )

    first = result.results[0]
    assert (first.memory.text, first.validity) == (
        "The user lives in the city of Porto.",
        "current",
    )
    assert sorted(hit.validity for hit in result.results[1:]) == ["superseded", "superseded"]


def test_of_two_conflicting_memories_the_later_fact_comes_first(tenant):
    older = remember(
        tenant, "a", "The user lives in the city of Berlin, city city.", occurred_at=MARCH
    )
    newer = remember(tenant, "a", "The user lives in Lisbon.", occurred_at=JUNE)
    memory_flag_conflict(tenant=tenant, subject_id="a", first=older, second=newer)

    result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, mode="keyword")

    assert _texts(result) == ["The user lives in Lisbon.", older.text]
    assert [hit.validity for hit in result.results] == ["contested", "contested"]


def test_a_promoted_memory_never_outranks_the_explicit_one_it_contradicts(tenant):
    explicit = remember(
        tenant, "a", "The user lives in the city of Berlin, city city.", occurred_at=MARCH
    )
    promoted = remember(tenant, "a", "The user lives in Lisbon.", occurred_at=JUNE)
    Memory.objects.filter(pk=promoted.pk).update(source=MemorySource.PROMOTED)
    memory_flag_conflict(tenant=tenant, subject_id="a", first=explicit, second=promoted)

    result = memory_recall(tenant=tenant, subject_id="a", query=QUERY, mode="keyword")

    assert _texts(result) == [explicit.text, "The user lives in Lisbon."]


def test_list_as_of_lists_what_held_then(tenant, chain, neighbours):
    spring = memory_list(tenant=tenant, subject_id="a", as_of=MARCH + timedelta(days=1))
    now = memory_list(tenant=tenant, subject_id="a")

    assert sorted(m.text for m in spring.results) == [
        "The user lives in the city of Berlin.",
        "The user lives in the city of Oslo.",
    ]
    assert sorted(m.text for m in now.results) == [
        "The user lives in the city of Oslo.",
        "The user lives in the city of Porto.",
    ]
