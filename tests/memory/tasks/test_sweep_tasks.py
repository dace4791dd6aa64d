"""The beat's promotion and graduation sweeps, called as beat calls them: the task function,
with no arguments, against the clock (the services under them are covered in
tests/memory/services/test_sweep_isolation.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.knowledge.models import Article, ArticleSource
from apps.memory.models import Memory, PromotionJob, PromotionJobStatus, SessionMemory
from apps.memory.tasks import graduation_sweep_task, promotion_sweep_task
from tests.memory.factories import MemoryFactory, PromotionJobFactory, SessionTurnFactory


@pytest.fixture
def promote_delay(mocker):
    """The broker: what the sweep sends after commit."""
    return mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")


def _idle_session(tenant, session_id: str, *, idle_for: timedelta) -> None:
    SessionTurnFactory.create(tenant=tenant, session_id=session_id, content="I deploy on Fridays")
    SessionTurnFactory.create(
        tenant=tenant, session_id=session_id, role="assistant", content="Noted."
    )
    # created_at is auto_now_add: an idle session is one whose turns were written a while ago.
    SessionMemory.objects.filter(tenant=tenant, session_id=session_id).update(
        created_at=timezone.now() - idle_for
    )


def test_the_promotion_sweep_task_queues_idle_sessions_and_resends_lost_jobs(
    tenant, settings, promote_delay, django_capture_on_commit_callbacks
):
    idle = timedelta(seconds=settings.PROMOTION_SWEEP_IDLE_SECONDS + 60)
    _idle_session(tenant, "idle", idle_for=idle)
    _idle_session(tenant, "active", idle_for=timedelta(0))  # the agent is still talking
    lease = timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS)
    lost = PromotionJobFactory.create(tenant=tenant, enqueued_at=timezone.now() - 2 * lease)

    with django_capture_on_commit_callbacks(execute=True):
        promotion_sweep_task()

    queued = PromotionJob.objects.get(tenant=tenant, session_id="idle")
    assert (queued.status, queued.trigger) == (PromotionJobStatus.QUEUED, "sweep")
    assert not PromotionJob.objects.filter(session_id="active").exists()
    lost.refresh_from_db()
    assert lost.status == PromotionJobStatus.QUEUED
    assert lost.enqueued_at > timezone.now() - lease  # re-sent under a fresh lease
    sent = {call.args[0] for call in promote_delay.call_args_list}
    assert sent == {str(queued.pk), str(lost.pk)}


def test_the_promotion_sweep_task_leaves_a_halted_tenant_alone(
    tenant, settings, promote_delay, django_capture_on_commit_callbacks
):
    _idle_session(
        tenant, "idle", idle_for=timedelta(seconds=settings.PROMOTION_SWEEP_IDLE_SECONDS + 60)
    )
    tenant.halted_at = timezone.now()
    tenant.save(update_fields=["halted_at"])

    with django_capture_on_commit_callbacks(execute=True):
        promotion_sweep_task()

    assert not PromotionJob.objects.exists()
    promote_delay.assert_not_called()


def test_the_graduation_sweep_task_graduates_hot_memories_only(tenant, settings):
    threshold = settings.MEMORY_GRADUATION_RECALL_THRESHOLD
    hot = MemoryFactory.create(
        tenant=tenant,
        text="Production deploys need a second reviewer.",
        recall_count=threshold,
        embedded=True,
    )
    cold = MemoryFactory.create(
        tenant=tenant,
        text="The office plant is watered on Mondays.",
        recall_count=threshold - 1,
        embedded=True,
    )

    graduation_sweep_task()

    hot.refresh_from_db()
    cold.refresh_from_db()
    assert hot.graduated_at is not None
    assert hot.graduated_global is True
    article = Article.objects.get(tenant=tenant, source_memory_id=hot.pk)
    assert (article.source, article.pk) == (ArticleSource.GRADUATED, hot.graduated_article_id)
    assert cold.graduated_at is None
    assert Article.objects.filter(tenant=tenant).count() == 1
    assert Memory.objects.filter(tenant=tenant, graduated_at__isnull=False).count() == 1
