"""The promotion job's lease: claim, release, finish, fail, and the reaper for lost jobs.

A job is in flight while ``queued`` or ``running``, and while it is in flight its session
answers ``already_queued``. So every in-flight job must end: a worker claims it under a lease
(``claimed_at``, one more ``attempts``); a queued job whose message was lost or a running job
whose worker died outlives its lease, and the reaper puts it back on the queue, or fails it
once ``PROMOTION_JOB_MAX_ATTEMPTS`` claims are spent. The lease is longer than Celery's hard
time limit, so a job that is still running is never taken from its worker.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import F, Q
from django.utils import timezone

from apps.core.db.on_commit import after_commit
from apps.core.db.transactions import write_transaction
from apps.core.telemetry import emit
from apps.memory.models import PROMOTION_IN_FLIGHT_STATUSES, PromotionJob, PromotionJobStatus
from apps.memory.queue import PROMOTE_SESSION

logger = logging.getLogger(__name__)

#: Outcome reasons a job can fail with outside the compiler's own.
LEASE_EXPIRED = "lease_expired"
RETRIES_EXHAUSTED = "retries_exhausted"
UNEXPECTED_ERROR = "unexpected_error"
TENANT_HALTED = "tenant_halted"


def lease() -> timedelta:
    return timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS)


def assert_promotion_lease_invariant() -> None:
    """A lease shorter than the task's hard time limit would hand a live job to a second
    worker; refuse to start with one."""
    limit = settings.CELERY_TASK_TIME_LIMIT
    if limit >= settings.PROMOTION_JOB_LEASE_SECONDS:
        raise ImproperlyConfigured(
            "Promotion lease invariant violated: need ENGRAM_PROMOTION_JOB_LEASE_SECONDS "
            f"({settings.PROMOTION_JOB_LEASE_SECONDS}) > CELERY_TASK_TIME_LIMIT ({limit})."
        )


def enqueue_job(job_id: uuid.UUID) -> Callable[[], None]:
    """An on-commit hook sending the job's message. A broker that is down loses nothing:
    the job stays queued and the reaper sends it again once its lease is over."""

    def enqueue() -> None:
        try:
            PROMOTE_SESSION.delay(str(job_id))
        except Exception:  # the broker's own errors vary by transport
            logger.warning("promotion job %s not sent; the reaper re-sends it", job_id)
            emit("memory_promotion.enqueue_failed", {"count": 1}, {"job_id": str(job_id)})

    return enqueue


def job_claim(*, job_id: uuid.UUID | str, now: datetime | None = None) -> PromotionJob | None:
    """Take a queued job under a fresh lease, or None (not queued: a redelivery, or reaped)."""
    now = now or timezone.now()
    claimed = PromotionJob.objects.filter(pk=job_id, status=PromotionJobStatus.QUEUED).update(
        status=PromotionJobStatus.RUNNING, claimed_at=now, attempts=F("attempts") + 1
    )
    if not claimed:
        return None
    return PromotionJob.objects.select_related("tenant").get(pk=job_id)


def job_release(job: PromotionJob) -> None:
    """Hand a claimed job back to the queue without spending an attempt (a snooze)."""
    PromotionJob.objects.filter(pk=job.pk, status=PromotionJobStatus.RUNNING).update(
        status=PromotionJobStatus.QUEUED,
        claimed_at=None,
        enqueued_at=timezone.now(),
        attempts=F("attempts") - 1,
    )


def job_finish(job: PromotionJob, status: str, outcome: dict[str, Any]) -> None:
    PromotionJob.objects.filter(pk=job.pk).update(
        status=status, outcome=outcome, finished_at=timezone.now()
    )


def job_fail(*, job_id: uuid.UUID | str, reason: str, detail: str = "") -> bool:
    """Fail an in-flight job, freeing its session. False when it had already ended."""
    outcome: dict[str, Any] = {"reason": reason}
    if detail:
        outcome["detail"] = detail[:200]
    failed = PromotionJob.objects.filter(pk=job_id, status__in=PROMOTION_IN_FLIGHT_STATUSES).update(
        status=PromotionJobStatus.FAILED, outcome=outcome, finished_at=timezone.now()
    )
    if failed:
        emit("memory_promotion.failed", {"count": 1}, {"job_id": str(job_id), "reason": reason})
    return bool(failed)


def _stale(now: datetime) -> Q:
    cutoff = now - lease()
    return Q(status=PromotionJobStatus.RUNNING, claimed_at__lt=cutoff) | Q(
        status=PromotionJobStatus.QUEUED, enqueued_at__lt=cutoff
    )


def job_is_stale(job: PromotionJob, *, now: datetime) -> bool:
    cutoff = now - lease()
    if job.status == PromotionJobStatus.RUNNING:
        return job.claimed_at is None or job.claimed_at < cutoff
    return job.status == PromotionJobStatus.QUEUED and (
        job.enqueued_at is None or job.enqueued_at < cutoff
    )


@dataclass
class ReapResult:
    requeued: int = 0
    failed: int = 0
    job_ids: list[str] = field(default_factory=list)


def job_reap(*, job: PromotionJob, now: datetime) -> str | None:
    """Re-queue one stale job, or fail it when its attempts are spent. Returns what was
    done (``requeued`` / ``failed``), or None when the job was not stale (or ended)."""
    with write_transaction():
        locked = (
            PromotionJob.objects.select_for_update(skip_locked=True)
            .filter(_stale(now), pk=job.pk)
            .first()
        )
        if locked is None:
            return None
        if locked.attempts >= settings.PROMOTION_JOB_MAX_ATTEMPTS:
            PromotionJob.objects.filter(pk=locked.pk).update(
                status=PromotionJobStatus.FAILED,
                outcome={"reason": LEASE_EXPIRED, "attempts": locked.attempts},
                finished_at=now,
            )
            emit("memory_promotion.failed", {"count": 1}, {"reason": LEASE_EXPIRED})
            return "failed"
        PromotionJob.objects.filter(pk=locked.pk).update(
            status=PromotionJobStatus.QUEUED, claimed_at=None, enqueued_at=now
        )
        after_commit(enqueue_job(locked.pk))
    emit("memory_promotion.requeued", {"count": 1}, {"attempts": locked.attempts})
    return "requeued"


def promotion_reap_stale(*, now: datetime | None = None) -> ReapResult:
    """Re-queue or fail every in-flight job that outlived its lease (bounded per run)."""
    now = now or timezone.now()
    stale = PromotionJob.objects.filter(_stale(now)).order_by("created_at")[
        : settings.PROMOTION_SWEEP_MAX_SESSIONS
    ]
    result = ReapResult()
    for job in stale:
        done = job_reap(job=job, now=now)
        if done == "requeued":
            result.requeued += 1
        elif done == "failed":
            result.failed += 1
        if done is not None:
            result.job_ids.append(str(job.pk))
    return result
