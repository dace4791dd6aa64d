"""Each subject's live count (``memory_scope_usage``, migration 0024) always equals the number
of its rows with no ``superseded_by``, whichever path writes, supersedes or removes a row,
and the quota reads it."""

import threading
import time

import pytest
from django.db import connection
from django.db.models import F

from apps.core.db.transactions import unit_of_work
from apps.dataops.services import erase_subject, erase_tenant
from apps.memory.exceptions import AlreadySuperseded, MemoryNotFound, QuotaExceeded
from apps.memory.models import Memory, MemoryTombstone
from apps.memory.selectors import memory_live_count, memory_scope_admission
from apps.memory.services import (
    MemoryDraft,
    memory_create_many,
    memory_forget,
    memory_remember,
    memory_supersede,
)
from apps.providers.embeddings import embedding_content_hash
from tests.memory.factories import MemoryFactory, memory_row
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

FROM_ROWS = """
    SELECT tenant_id, subject_id, count(*) FROM memory_memory
     WHERE superseded_by_id IS NULL GROUP BY tenant_id, subject_id
"""
FROM_USAGE = "SELECT tenant_id, subject_id, live FROM memory_scope_usage"


def _rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _assert_usage_matches_rows():
    expected = _rows(FROM_ROWS)
    assert _rows(FROM_USAGE) == expected
    return expected


def _drafts(*texts):
    return [MemoryDraft(text=text) for text in texts]


def test_writes_count_each_subjects_live_rows(tenant):
    memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("one", "two", "three"))
    memory_remember(tenant=tenant, subject_id="b", draft=MemoryDraft(text="four"))
    Memory.objects.bulk_create(
        MemoryFactory.build(tenant=tenant, subject_id=subject, text=f"{subject} {index}")
        for index in range(5)
        for subject in ("a", "c")
    )

    assert _assert_usage_matches_rows() == sorted(
        [(str(tenant.pk), "a", "8"), (str(tenant.pk), "b", "1"), (str(tenant.pk), "c", "5")]
    )
    assert memory_live_count(tenant=tenant, subject_id="a") == 8
    assert memory_live_count(tenant=tenant, subject_id="nobody") == 0


def test_supersede_keeps_the_count_and_forget_takes_the_whole_fact(tenant):
    old, _other = memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("Oslo", "tea"))
    middle = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft(text="Bergen")
    )
    newest = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=middle.pk, draft=MemoryDraft(text="Trondheim")
    )
    assert memory_live_count(tenant=tenant, subject_id="a") == 2
    _assert_usage_matches_rows()

    memory_forget(tenant=tenant, subject_id="a", memory_id=newest.pk)

    assert memory_live_count(tenant=tenant, subject_id="a") == 1
    _assert_usage_matches_rows()


def test_deleting_a_successor_makes_its_predecessor_live_again(tenant):
    old = memory_row(tenant, "a", "Oslo")
    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft(text="Bergen")
    )

    Memory.objects.filter(pk=new.pk).delete()  # the ORM sets old.superseded_by to NULL

    assert memory_live_count(tenant=tenant, subject_id="a") == 1
    _assert_usage_matches_rows()


def test_moving_rows_between_subjects_moves_their_count(tenant):
    memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("one", "two"))

    Memory.objects.filter(tenant=tenant, subject_id="a", text="one").update(subject_id="b")

    assert memory_live_count(tenant=tenant, subject_id="a") == 1
    assert memory_live_count(tenant=tenant, subject_id="b") == 1
    _assert_usage_matches_rows()


def test_an_erased_subject_or_tenant_leaves_no_count(tenant):
    other = TenantFactory.create()
    memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("one", "two"))
    memory_create_many(tenant=tenant, subject_id="b", drafts=_drafts("three"))
    memory_create_many(tenant=other, subject_id="a", drafts=_drafts("four"))

    erase_subject(tenant=tenant, subject_id="a", requested_by="test")

    assert _assert_usage_matches_rows() == sorted(
        [(str(tenant.pk), "b", "1"), (str(other.pk), "a", "1")]
    )

    erase_tenant(tenant=tenant, requested_by="test")

    assert _assert_usage_matches_rows() == [(str(other.pk), "a", "1")]


def test_truncating_the_memories_truncates_the_counts(tenant):
    memory_row(tenant, "a", "tea in the garden")

    with connection.cursor() as cursor:
        # The test's transaction still holds the insert's deferred foreign-key checks.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("TRUNCATE memory_memory CASCADE")

    assert _rows(FROM_USAGE) == []


def test_updates_that_leave_liveness_alone_leave_the_count_row_alone(tenant):
    memory = memory_row(tenant, "a", "tea in the garden")
    with connection.cursor() as cursor:
        cursor.execute("SELECT ctid FROM memory_scope_usage")
        before = cursor.fetchall()

    Memory.objects.filter(pk=memory.pk).update(recall_count=5, subject_id="a")

    with connection.cursor() as cursor:
        cursor.execute("SELECT ctid FROM memory_scope_usage")
        assert cursor.fetchall() == before


def test_the_quota_reads_the_count(tenant, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 3
    memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("one", "two", "three"))
    # Rows the count says are not there do not hold the quota: the count is what is read.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_scope_usage SET live = 1 WHERE subject_id = 'a'")

    memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="four"))

    with pytest.raises(QuotaExceeded) as refused:
        memory_create_many(tenant=tenant, subject_id="a", drafts=_drafts("five", "six"))
    assert refused.value.details == {"quota": 3, "live": 2, "requested": 2}


def test_admission_says_whether_a_text_being_written_was_forgotten(tenant):
    kept = memory_row(tenant, "a", "kept")
    gone = memory_row(tenant, "a", "gone")
    memory_forget(tenant=tenant, subject_id="a", memory_id=gone.pk)

    def admission(*texts, subject_id="a"):
        return memory_scope_admission(
            tenant=tenant,
            subject_id=subject_id,
            content_hashes=[embedding_content_hash(text) for text in texts],
        )

    assert admission("gone").tombstoned
    assert admission("new", "gone").tombstoned
    assert not admission("kept", "new").tombstoned
    assert not admission().tombstoned
    assert not admission("gone", subject_id="b").tombstoned
    assert admission().live == 1
    assert kept.superseded_by_id is None


@pytest.mark.django_db(transaction=True)
def test_a_tenant_erasure_waits_for_a_write_in_flight_instead_of_deadlocking(tenant):
    """A write holds its subject's count row until it commits. The erasure flips superseded
    rows live before deleting them, which moves that count; if it locked the memory rows first,
    a write then touching one of them would wait on the erasure while the erasure waited on
    its count row. The erasure takes the count rows first, so the write finishes."""
    old = memory_row(tenant, "a", "Oslo")
    memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft(text="Bergen")
    )
    inserted = threading.Event()
    erasure_started = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with unit_of_work():  # the write's transaction, held open
                memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="Tromsø"))
                inserted.set()  # this transaction now holds subject a's count row
                erasure_started.wait(timeout=10)
                time.sleep(0.5)  # long enough for the erasure to reach the memory rows
                Memory.objects.filter(pk=old.pk).update(recall_count=F("recall_count") + 1)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    def erase() -> None:
        try:
            inserted.wait(timeout=10)
            erasure_started.set()
            erase_tenant(tenant=tenant, requested_by="test")
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=write), threading.Thread(target=erase)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert not Memory.objects.filter(tenant=tenant).exists()
    assert _rows(FROM_USAGE) == []


@pytest.mark.django_db(transaction=True)
def test_counts_stay_exact_under_concurrent_writes_supersedes_and_forgets(tenant, mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    subjects = ("a", "b", "c")
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def agent(number: int) -> None:
        try:
            start.wait()
            for step in range(15):
                subject = subjects[(number + step) % len(subjects)]
                live = list(
                    Memory.objects.filter(
                        tenant=tenant, subject_id=subject, superseded_by__isnull=True
                    ).values_list("pk", flat=True)[:3]
                )
                try:
                    if step % 3 == 0 or not live:
                        memory_create_many(
                            tenant=tenant,
                            subject_id=subject,
                            drafts=_drafts(f"{number}-{step}-x", f"{number}-{step}-y"),
                        )
                    elif step % 3 == 1:
                        memory_supersede(
                            tenant=tenant,
                            subject_id=subject,
                            memory_id=live[0],
                            draft=MemoryDraft(text=f"{number}-{step}-new"),
                        )
                    else:
                        memory_forget(tenant=tenant, subject_id=subject, memory_id=live[-1])
                except (AlreadySuperseded, MemoryNotFound):
                    pass  # another agent superseded or forgot that row first
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=agent, args=(number,)) for number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    rows = _assert_usage_matches_rows()
    assert {subject for _tenant, subject, _live in rows} == set(subjects)
    # Every kind of change ran: rows were superseded and facts forgotten.
    assert Memory.objects.filter(tenant=tenant, superseded_by__isnull=False).exists()
    assert MemoryTombstone.objects.filter(tenant=tenant).exists()
