"""Promotion jobs cannot wedge a session: lease, reaper, unexpected errors, spent retries."""

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from apps.memory.models import Memory, PromotionJob
from apps.memory.services import (
    PromotionSnoozed,
    assert_promotion_lease_invariant,
    job_claim,
    promotion_request,
    promotion_run,
    promotion_sweep,
)
from apps.memory.tasks import MAX_PROMOTION_SNOOZES, promote_session_task
from tests.memory.promotion_pipeline.conftest import add_turns, fact

SESSION = "session-1"


def _reserve(tenant, promoter, session=SESSION):
    add_turns(tenant, "agent-a", session, "I deploy with Argo CD", "Noted.")
    promoter.says(fact("The user deploys with Argo CD."))
    request = promotion_request(tenant=tenant, subject_id="agent-a", session_id=session)
    assert request.enqueued is True
    return request.job_id


def _job(job_id):
    return PromotionJob.objects.get(pk=job_id)


def _after_lease(settings, seconds=1):
    return timezone.now() + timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS + seconds)


def test_a_claim_stamps_the_lease_and_counts_the_attempt(tenant, promoter):
    job_id = _reserve(tenant, promoter)
    before = timezone.now()

    job = job_claim(job_id=job_id)

    assert job is not None
    assert (job.status, job.attempts) == ("running", 1)
    assert job.claimed_at is not None
    assert job.claimed_at >= before
    assert job_claim(job_id=job_id) is None  # a redelivered message claims nothing


def test_a_job_whose_worker_died_is_requeued_by_the_next_trigger_and_then_runs(
    tenant, promoter, settings
):
    job_id = _reserve(tenant, promoter)
    job_claim(
        job_id=job_id,
        now=timezone.now() - timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS + 5),
    )

    again = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)
    requeued = _job(job_id)
    status = promotion_run(job_id=job_id)

    assert (again.enqueued, again.reason, again.job_id) == (False, "already_queued", job_id)
    assert (requeued.status, requeued.claimed_at, requeued.attempts) == ("queued", None, 1)
    assert status == "completed"
    assert _job(job_id).attempts == 2
    assert Memory.objects.filter(tenant=tenant, source="promoted").count() == 1


def test_a_live_lease_is_left_alone(tenant, promoter):
    job_id = _reserve(tenant, promoter)
    job_claim(job_id=job_id)

    again = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)
    swept = promotion_sweep()

    assert (again.reason, _job(job_id).status) == ("already_queued", "running")
    assert (swept.requeued, swept.failed_stale) == (0, 0)


def test_the_sweep_requeues_stale_jobs_and_fails_those_out_of_attempts(tenant, promoter, settings):
    settings.PROMOTION_JOB_MAX_ATTEMPTS = 2
    retry = _reserve(tenant, promoter, session="retry-me")
    spent = _reserve(tenant, promoter, session="spent")
    lost_message = _reserve(tenant, promoter, session="never-delivered")
    job_claim(job_id=retry)
    job_claim(job_id=spent)
    PromotionJob.objects.filter(pk=spent).update(attempts=2)

    swept = promotion_sweep(now=_after_lease(settings))

    assert (swept.requeued, swept.failed_stale) == (2, 1)
    assert (_job(retry).status, _job(lost_message).status) == ("queued", "queued")
    assert (_job(spent).status, _job(spent).outcome) == (
        "failed",
        {"reason": "lease_expired", "attempts": 2},
    )
    assert _job(spent).finished_at is not None


def test_a_failed_stale_job_frees_its_session_for_a_new_job(tenant, promoter, settings):
    settings.PROMOTION_JOB_MAX_ATTEMPTS = 1
    job_id = _reserve(tenant, promoter)
    job_claim(
        job_id=job_id,
        now=timezone.now() - timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS + 5),
    )

    again = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)

    assert (again.enqueued, again.reason) == (True, "enqueued")
    assert again.job_id != job_id
    assert _job(job_id).status == "failed"
    assert promotion_run(job_id=again.job_id) == "completed"


def test_an_unexpected_error_fails_the_job_with_its_reason_and_frees_the_session(
    tenant, promoter, monkeypatch
):
    job_id = _reserve(tenant, promoter)

    def explode(*args, **kwargs):
        raise KeyError("not a compile failure")

    monkeypatch.setattr("apps.memory.services.promotion.compile_turns", explode)
    status = promotion_run(job_id=job_id)
    monkeypatch.undo()
    again = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)

    job = _job(job_id)
    assert status == "failed"
    assert (job.status, job.outcome) == (
        "failed",
        {"reason": "unexpected_error", "detail": "KeyError"},
    )
    assert (again.enqueued, again.reason) == (True, "enqueued")
    assert promotion_run(job_id=again.job_id) == "completed"


def test_spent_celery_retries_fail_the_job_and_free_the_session(tenant, promoter):
    job_id = _reserve(tenant, promoter)
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()

    promote_session_task.apply(args=[str(job_id)], retries=MAX_PROMOTION_SNOOZES)

    job = _job(job_id)
    assert (job.status, job.outcome["reason"]) == ("failed", "retries_exhausted")
    assert Memory.objects.filter(tenant=tenant).count() == 0
    again = promotion_request(tenant=tenant, subject_id="agent-a", session_id=SESSION)
    assert (again.enqueued, again.reason) == (True, "enqueued")


def test_a_snooze_hands_the_attempt_back(tenant, promoter):
    job_id = _reserve(tenant, promoter)
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()

    with pytest.raises(PromotionSnoozed):
        promotion_run(job_id=job_id)

    job = _job(job_id)
    assert (job.status, job.attempts, job.claimed_at) == ("queued", 0, None)


def test_a_lease_shorter_than_the_task_time_limit_refuses_to_start(settings):
    settings.CELERY_TASK_TIME_LIMIT = 300
    settings.PROMOTION_JOB_LEASE_SECONDS = 300

    with pytest.raises(ImproperlyConfigured, match="PROMOTION_JOB_LEASE_SECONDS"):
        assert_promotion_lease_invariant()
