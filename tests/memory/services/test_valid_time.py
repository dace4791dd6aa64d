"""Valid time on the write path: every memory is valid from when it happened (or when the
writer says), a supersede ends the old fact where the new one begins and records why, and a
forget leaves no id behind in the rows that named the forgotten one."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from apps.extraction.promotion.types import Candidate
from apps.memory.models import Memory, MemorySource
from apps.memory.services import (
    MemoryDraft,
    memory_create_many,
    memory_flag_conflict,
    memory_forget,
    memory_remember,
    memory_supersede,
    promotion_persist,
)

pytestmark = pytest.mark.django_db

MARCH = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
JUNE = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


def _write(tenant, text, **draft):
    return memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text=text, **draft))


def test_a_memory_is_valid_from_when_it_happened_and_while_nothing_replaces_it(tenant):
    given = _write(tenant, "The user works at Stripe.", occurred_at=MARCH)
    defaulted = _write(tenant, "The user likes tea.")

    given.refresh_from_db()
    defaulted.refresh_from_db()
    assert (given.valid_from, given.valid_to) == (MARCH, None)
    assert defaulted.valid_from == defaulted.occurred_at
    assert (defaulted.supersedes, defaulted.supersede_reason, defaulted.conflicts_with) == (
        [],
        "",
        [],
    )


def test_a_writer_may_say_when_the_fact_became_true(tenant):
    memory = _write(tenant, "The user lives in Lisbon.", occurred_at=JUNE, valid_from=MARCH)

    memory.refresh_from_db()
    assert (memory.occurred_at, memory.valid_from) == (JUNE, MARCH)


def test_supersede_ends_the_old_fact_where_the_new_one_begins(tenant):
    old = _write(tenant, "The user lives in Berlin.", occurred_at=MARCH)

    new = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=old.pk,
        draft=MemoryDraft(text="The user lives in Lisbon.", occurred_at=JUNE),
    )

    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.valid_from, old.valid_to, old.superseded_by_id) == (MARCH, JUNE, new.pk)
    assert (new.valid_from, new.valid_to) == (JUNE, None)
    assert (new.supersedes, new.supersede_reason) == ([old.pk], "explicit")


def test_a_correction_valid_from_the_old_start_leaves_the_old_fact_true_at_no_time(tenant):
    old = _write(tenant, "The user's birthday is 6 May.", occurred_at=MARCH)

    memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=old.pk,
        draft=MemoryDraft(text="The user's birthday is 5 May.", valid_from=MARCH - timedelta(1)),
    )

    old.refresh_from_db()
    assert old.valid_to == old.valid_from == MARCH


def _promote(tenant, text, when, *, subject_id="a", session_id="s1"):
    return promotion_persist(
        tenant=tenant,
        subject_id=subject_id,
        session_id=session_id,
        candidates=[Candidate(text=text, confidence=0.9, occurred_at=when)],
    )


def test_a_promoted_paraphrase_stands_for_the_fact_over_its_whole_validity(tenant, settings):
    settings.PROMOTION_NEAR_DUPLICATE_THRESHOLD = 0.0  # any promoted row is "near"
    first = _promote(tenant, "The user deploys billing on Tuesdays.", MARCH)
    second = _promote(tenant, "Billing deploys go out Tuesdays.", JUNE, session_id="s2")

    old = Memory.objects.get(pk=first.memory_ids[0])
    new = Memory.objects.get(pk=second.memory_ids[0])
    assert (old.superseded_by_id, old.valid_from, old.valid_to) == (new.pk, MARCH, MARCH)
    assert (new.valid_from, new.supersedes, new.supersede_reason) == (
        MARCH,
        [old.pk],
        "paraphrase",
    )


def test_a_paraphrase_is_found_however_near_other_tenants_rows_lie(tenant, other_tenant, settings):
    settings.PROMOTION_NEAR_DUPLICATE_THRESHOLD = 0.0  # any promoted row is "near"
    paraphrase = "Billing deploys go out Tuesdays."
    for index in range(60):
        _promote(other_tenant, paraphrase, MARCH, subject_id=f"other-{index}")
    first = _promote(tenant, "The user deploys billing on Tuesdays.", MARCH)
    with connection.cursor() as cursor:
        # A planner that prefers the vector index, whose nearest rows are the other tenants'.
        cursor.execute("SET LOCAL enable_sort = off")

    second = _promote(tenant, paraphrase, JUNE, session_id="s2")

    old = Memory.objects.get(pk=first.memory_ids[0])
    assert str(old.superseded_by_id) == second.memory_ids[0]


def test_forget_removes_the_forgotten_ids_from_the_rows_that_named_them(tenant):
    old = _write(tenant, "The user lives in Berlin.", occurred_at=MARCH)
    new = memory_supersede(
        tenant=tenant,
        subject_id="a",
        memory_id=old.pk,
        draft=MemoryDraft(text="The user lives in Lisbon.", occurred_at=JUNE),
    )
    # Texts the change detector makes nothing of: only the links written here are tested.
    rival, other = memory_create_many(
        tenant=tenant,
        subject_id="a",
        drafts=[MemoryDraft("Porto notes."), MemoryDraft("The user likes tea.")],
    )
    memory_flag_conflict(tenant=tenant, subject_id="a", first=new, second=rival)
    foreign = memory_remember(tenant=tenant, subject_id="b", draft=MemoryDraft("Rome notes."))
    Memory.objects.filter(pk=foreign.pk).update(conflicts_with=[rival.pk])

    memory_forget(tenant=tenant, subject_id="a", memory_id=rival.pk)
    Memory.objects.filter(pk=new.pk).update(supersedes=[old.pk, other.pk])
    memory_forget(tenant=tenant, subject_id="a", memory_id=other.pk)

    new.refresh_from_db()
    foreign.refresh_from_db()
    assert (new.supersedes, new.conflicts_with) == ([old.pk], [])
    # Another subject's row is never touched, even where it names the same id.
    assert foreign.conflicts_with == [rival.pk]


def test_forgetting_the_current_version_takes_its_history_and_every_reference(tenant):
    old = _write(tenant, "The user lives in Berlin.", occurred_at=MARCH)
    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("Lives in Lisbon.")
    )
    rival = _write(tenant, "Porto notes.")
    memory_flag_conflict(tenant=tenant, subject_id="a", first=new, second=rival)

    memory_forget(tenant=tenant, subject_id="a", memory_id=new.pk)

    rival.refresh_from_db()
    assert list(Memory.objects.filter(tenant=tenant).values_list("pk", flat=True)) == [rival.pk]
    assert rival.conflicts_with == []


def test_flagging_a_conflict_is_symmetric_and_idempotent(tenant):
    first = _write(tenant, "Berlin notes.")
    second = _write(tenant, "Lisbon notes.", source=MemorySource.EXPLICIT)

    for _ in range(2):
        memory_flag_conflict(tenant=tenant, subject_id="a", first=first, second=second)

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.conflicts_with, second.conflicts_with) == ([second.pk], [first.pk])
