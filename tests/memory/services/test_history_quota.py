"""The history quota: superseded versions kept per subject, counted by the same triggers as the
live rows (migration 0027), and a supersede past it refused before anything is written —
exactly at the bound under concurrent writers."""

import pytest
from django.db import connection

from apps.dataops.services import erase_subject
from apps.memory.exceptions import HistoryQuotaExceeded
from apps.memory.models import Memory
from apps.memory.selectors import memory_scope_admission
from apps.memory.services import (
    MemoryDraft,
    memory_create_many,
    memory_forget,
    memory_remember,
    memory_supersede,
)
from tests.concurrency import Race, race

WRITERS = 24

FROM_ROWS = """
    SELECT tenant_id, subject_id,
           count(*) FILTER (WHERE superseded_by_id IS NULL),
           count(*) FILTER (WHERE superseded_by_id IS NOT NULL)
      FROM memory_memory GROUP BY tenant_id, subject_id
"""
FROM_USAGE = "SELECT tenant_id, subject_id, live, superseded FROM memory_scope_usage"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _counts(tenant, subject_id):
    admission = memory_scope_admission(tenant=tenant, subject_id=subject_id, content_hashes=[])
    return admission.live, admission.superseded


def _supersede(tenant, subject_id, memory, text):
    return memory_supersede(
        tenant=tenant, subject_id=subject_id, memory_id=memory.pk, draft=MemoryDraft(text=text)
    )


@pytest.mark.django_db
def test_every_path_keeps_the_superseded_count(tenant, other_tenant):
    oslo, tea = memory_create_many(
        tenant=tenant, subject_id="a", drafts=[MemoryDraft(text="Oslo"), MemoryDraft(text="tea")]
    )
    bergen = _supersede(tenant, "a", oslo, "Bergen")
    trondheim = _supersede(tenant, "a", bergen, "Trondheim")
    coffee = _supersede(tenant, "a", tea, "coffee")
    memory_remember(tenant=other_tenant, subject_id="a", draft=MemoryDraft(text="x"))
    assert _counts(tenant, "a") == (2, 3)
    assert _rows(FROM_USAGE) == _rows(FROM_ROWS)

    # Deleting a live version outside forget makes its predecessor live again (SET_NULL).
    Memory.objects.filter(pk=coffee.pk).delete()
    assert _counts(tenant, "a") == (2, 2)
    # A superseded row moved to another owner takes its count along.
    Memory.objects.filter(pk=oslo.pk).update(subject_id="b")
    assert (_counts(tenant, "a"), _counts(tenant, "b")) == ((2, 1), (0, 1))
    assert _rows(FROM_USAGE) == _rows(FROM_ROWS)

    memory_forget(tenant=tenant, subject_id="a", memory_id=trondheim.pk)  # and Bergen
    assert _counts(tenant, "a") == (1, 0)
    erase_subject(tenant=tenant, subject_id="b", requested_by="test")
    assert _counts(tenant, "b") == (0, 0)
    assert _rows(FROM_USAGE) == _rows(FROM_ROWS)


@pytest.mark.django_db
def test_the_supersede_past_the_quota_is_refused_and_writes_nothing(tenant, settings):
    settings.MEMORY_QUOTA_SUPERSEDED_ROWS = 2
    first = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="v1"))
    latest = _supersede(tenant, "a", _supersede(tenant, "a", first, "v2"), "v3")

    with pytest.raises(HistoryQuotaExceeded) as refused:
        _supersede(tenant, "a", latest, "v4")

    assert refused.value.code == "history_quota_exceeded"
    assert refused.value.details == {"quota": 2, "superseded": 2}
    assert list(Memory.objects.filter(tenant=tenant, superseded_by__isnull=True)) == [latest]
    assert Memory.objects.filter(tenant=tenant).count() == 3
    # New facts still fit: the live quota is its own.
    memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="another fact"))


@pytest.mark.django_db
def test_forgetting_a_fact_frees_its_history_and_other_subjects_are_unaffected(
    tenant, other_tenant, settings
):
    settings.MEMORY_QUOTA_SUPERSEDED_ROWS = 1
    old = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="v1"))
    latest = _supersede(tenant, "a", old, "v2")
    for owner_tenant, subject in ((tenant, "b"), (other_tenant, "a")):
        mine = memory_remember(tenant=owner_tenant, subject_id=subject, draft=MemoryDraft(text="x"))
        _supersede(owner_tenant, subject, mine, "y")

    memory_forget(tenant=tenant, subject_id="a", memory_id=latest.pk)
    fresh = memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="w1"))
    _supersede(tenant, "a", fresh, "w2")

    assert _counts(tenant, "a") == (1, 1)


@pytest.mark.django_db(transaction=True)
def test_concurrent_supersedes_stop_exactly_at_the_history_quota(tenant, settings):
    settings.MEMORY_QUOTA_SUPERSEDED_ROWS = 10
    facts = memory_create_many(
        tenant=tenant,
        subject_id="racer",
        drafts=[MemoryDraft(text=f"fact {index}") for index in range(WRITERS)],
    )

    raced = race(
        lambda index: _supersede(tenant, "racer", facts[index], f"fact {index}, corrected"),
        writers=WRITERS,
        refused_by=HistoryQuotaExceeded,
    )

    assert raced == Race(written=10, refused=WRITERS - 10)
    assert _counts(tenant, "racer") == (WRITERS, 10)
    assert Memory.objects.filter(tenant=tenant, subject_id="racer").count() == WRITERS + 10
    assert _rows(FROM_USAGE) == _rows(FROM_ROWS)
