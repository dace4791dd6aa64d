import uuid

import pytest

from apps.memory.exceptions import AlreadySuperseded, MemoryNotFound
from apps.memory.models import Memory
from apps.memory.services import (
    MemoryDraft,
    memory_forget,
    memory_forget_any,
    memory_remember,
    memory_supersede,
)


def _write(tenant, subject, text):
    return memory_remember(tenant=tenant, subject_id=subject, draft=MemoryDraft(text=text))


def test_supersede_keeps_the_old_row_hidden_and_links_it(tenant):
    old = _write(tenant, "a", "Deploys go out on Fridays")

    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft(text="No Friday deploys")
    )

    old.refresh_from_db()
    assert old.superseded_by_id == new.pk
    assert old.superseded_at is not None
    assert old.text == "Deploys go out on Fridays"
    assert Memory.objects.filter(superseded_by__isnull=True, subject_id="a").get().pk == new.pk


def test_supersede_is_allowed_at_the_quota(tenant, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 1
    old = _write(tenant, "a", "v1")

    new = memory_supersede(tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("v2"))

    assert new.text == "v2"


def test_a_superseded_row_cannot_be_superseded_again(tenant):
    old = _write(tenant, "a", "v1")
    memory_supersede(tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("v2"))

    with pytest.raises(AlreadySuperseded):
        memory_supersede(tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("v3"))

    assert Memory.objects.filter(tenant=tenant).count() == 2


@pytest.mark.parametrize("_case", ["other_subject", "other_tenant", "missing"])
def test_supersede_of_a_foreign_or_missing_row_is_not_found(tenant, other_tenant, _case):
    owner = {"other_subject": (tenant, "b"), "other_tenant": (other_tenant, "a")}
    target = _write(*owner[_case], "theirs").pk if _case != "missing" else uuid.uuid4()

    with pytest.raises(MemoryNotFound):
        memory_supersede(tenant=tenant, subject_id="a", memory_id=target, draft=MemoryDraft("x"))

    assert Memory.objects.filter(superseded_by__isnull=False).count() == 0


def test_forget_deletes_the_memory_and_its_superseded_history(tenant):
    v1 = _write(tenant, "a", "v1")
    v2 = memory_supersede(tenant=tenant, subject_id="a", memory_id=v1.pk, draft=MemoryDraft("v2"))
    v3 = memory_supersede(tenant=tenant, subject_id="a", memory_id=v2.pk, draft=MemoryDraft("v3"))
    unrelated = _write(tenant, "a", "unrelated")

    result = memory_forget(tenant=tenant, subject_id="a", memory_id=v3.pk)

    assert result.memories_deleted == 3
    assert list(Memory.objects.filter(tenant=tenant).values_list("pk", flat=True)) == [unrelated.pk]


@pytest.mark.parametrize("_case", ["other_subject", "other_tenant"])
def test_forget_is_confined_to_the_callers_scope(tenant, other_tenant, _case):
    owner = {"other_subject": (tenant, "b"), "other_tenant": (other_tenant, "a")}[_case]
    theirs = _write(*owner, "theirs")

    with pytest.raises(MemoryNotFound):
        memory_forget(tenant=tenant, subject_id="a", memory_id=theirs.pk)

    assert Memory.objects.filter(pk=theirs.pk).exists()


def test_forget_any_reaches_every_subject_of_the_tenant_only(tenant, other_tenant):
    theirs = _write(tenant, "b", "theirs")
    foreign = _write(other_tenant, "b", "foreign")

    memory_forget_any(tenant=tenant, memory_id=theirs.pk)
    with pytest.raises(MemoryNotFound):
        memory_forget_any(tenant=tenant, memory_id=foreign.pk)

    assert not Memory.objects.filter(pk=theirs.pk).exists()
    assert Memory.objects.filter(pk=foreign.pk).exists()
