import uuid

import pytest
from django.conf import settings

from apps.core.exceptions import ValidationFailed
from apps.memory.exceptions import InvalidProjectId, QuotaExceeded
from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_create_many, memory_remember
from apps.providers.embeddings import embedding_content_hash
from tests.projects.factories import ProjectFactory


def test_remember_writes_a_pending_row_and_embeds_after_commit(
    tenant, django_capture_on_commit_callbacks, mocker
):
    delay = mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        memory = memory_remember(
            tenant=tenant, subject_id="agent-a", draft=MemoryDraft(text="Prefers tabs", tags=["x"])
        )

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.embedding is None
    assert stored.embedded_at is None
    assert stored.source == "explicit"
    assert stored.embedding_content_hash == embedding_content_hash("Prefers tabs")
    assert stored.tags == ["x"]
    assert len(callbacks) == 1
    delay.assert_called_once_with(
        args=[str(tenant.pk)], countdown=settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS
    )  # the tenant's drain, woken after commit


def test_a_large_batch_wakes_one_drain_and_a_rolled_back_write_none(
    tenant, settings, django_capture_on_commit_callbacks, mocker
):
    settings.EMBEDDING_BATCH_SIZE = 2
    delay = mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        memory_create_many(
            tenant=tenant,
            subject_id="a",
            drafts=[MemoryDraft(text=f"fact {i}") for i in range(5)],
        )
    settings.MEMORY_QUOTA_LIVE_ROWS = 5
    with (
        django_capture_on_commit_callbacks(execute=True) as refused,
        pytest.raises(QuotaExceeded),
    ):
        memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="no room"))

    assert len(callbacks) == 1
    delay.assert_called_once_with(
        args=[str(tenant.pk)], countdown=settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS
    )
    assert refused == []


def test_quota_counts_only_live_rows_of_the_subject(tenant, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 3
    memory_create_many(
        tenant=tenant, subject_id="a", drafts=[MemoryDraft(text=f"a{i}") for i in range(3)]
    )
    memory_create_many(tenant=tenant, subject_id="b", drafts=[MemoryDraft(text="b0")])

    with pytest.raises(QuotaExceeded) as excinfo:
        memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="one too many"))

    assert excinfo.value.http_status == 409
    assert excinfo.value.details == {"quota": 3, "live": 3, "requested": 1}
    assert Memory.objects.filter(tenant=tenant, subject_id="a").count() == 3


def test_batch_over_quota_writes_nothing(tenant, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 5
    memory_create_many(
        tenant=tenant, subject_id="a", drafts=[MemoryDraft(text=f"a{i}") for i in range(3)]
    )

    with pytest.raises(QuotaExceeded):
        memory_create_many(
            tenant=tenant, subject_id="a", drafts=[MemoryDraft(text=f"n{i}") for i in range(3)]
        )

    assert Memory.objects.filter(tenant=tenant, subject_id="a").count() == 3


def test_batch_with_one_invalid_item_writes_nothing(tenant):
    drafts = [MemoryDraft(text="fine"), MemoryDraft(text="   ")]

    with pytest.raises(ValidationFailed) as excinfo:
        memory_create_many(tenant=tenant, subject_id="a", drafts=drafts)

    assert excinfo.value.details == {"index": 1}
    assert Memory.objects.filter(tenant=tenant).count() == 0


def test_text_over_the_cap_is_text_too_long(tenant, settings):
    settings.MEMORY_TEXT_MAX_CHARS = 10

    with pytest.raises(ValidationFailed) as excinfo:
        memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(text="x" * 11))

    assert excinfo.value.code == "text_too_long"
    assert Memory.objects.count() == 0


def test_project_id_must_belong_to_the_tenant(tenant, other_tenant):
    foreign = ProjectFactory.create(tenant=other_tenant)

    for project_id in (foreign.pk, uuid.uuid4()):
        with pytest.raises(InvalidProjectId) as excinfo:
            memory_remember(
                tenant=tenant, subject_id="a", draft=MemoryDraft(text="t", project_id=project_id)
            )
        assert excinfo.value.code == "invalid_project_id"
    assert Memory.objects.count() == 0


def test_project_memory_is_partitioned(tenant):
    project = ProjectFactory.create(tenant=tenant)

    memory = memory_remember(
        tenant=tenant, subject_id="a", draft=MemoryDraft(text="t", project_id=project.pk)
    )

    assert Memory.objects.get(pk=memory.pk).project_id == project.pk
