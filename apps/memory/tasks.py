"""Thin Celery wrappers (STYLE rule 11): load ids, call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from apps.core.embedding_retries import MAX_EMBEDDING_RETRIES, snooze_while_unavailable


@shared_task(
    name="memory.embed_memories",
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=MAX_EMBEDDING_RETRIES,
)
def embed_memories_task(self: Any, memory_ids: list[str]) -> None:
    """Embed the given rows now. Writes wake ``memory.drain_embeddings`` instead; this name
    stays registered so messages already queued under it are still consumed."""
    from apps.memory.services import memory_embed_pending

    run = memory_embed_pending(memory_ids=memory_ids)
    snooze_while_unavailable(self, unavailable=bool(run.unavailable))


@shared_task(
    name="memory.drain_embeddings",
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=MAX_EMBEDDING_RETRIES,
)
def drain_embeddings_task(self: Any, tenant_id: str) -> None:
    from apps.memory.services import memory_drain_embeddings

    run = memory_drain_embeddings(tenant_id=tenant_id)
    snooze_while_unavailable(self, unavailable=bool(run.unavailable))


@shared_task(name="memory.backfill_embeddings", ignore_result=True, acks_late=True)
def backfill_embeddings_task() -> None:
    from apps.memory.services import memory_backfill_embeddings

    memory_backfill_embeddings()


@shared_task(name="memory.prune_expired_sessions", ignore_result=True, acks_late=True)
def prune_expired_sessions_task() -> None:
    from apps.core.telemetry import emit
    from apps.memory.services import session_prune_expired

    report = session_prune_expired()
    emit(
        "memory_session.pruned",
        {"deleted": report.total, "held": report.held},
        {"deleted_by_reason": report.deleted},
    )


MAX_PROMOTION_SNOOZES = 12


@shared_task(
    name="memory.promote_session",
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=MAX_PROMOTION_SNOOZES,
)
def promote_session_task(self: Any, job_id: str) -> None:
    from apps.memory.services import RETRIES_EXHAUSTED, PromotionSnoozed, job_fail, promotion_run

    try:
        promotion_run(job_id=job_id)
    except PromotionSnoozed as exc:
        if self.request.retries >= MAX_PROMOTION_SNOOZES:
            # Out of retries: fail the job so its session is free for a later trigger.
            job_fail(job_id=job_id, reason=RETRIES_EXHAUSTED, detail=exc.reason)
            return
        # Embeddings are down: nothing was written and the job is queued again.
        raise self.retry(countdown=settings.EMBEDDING_RETRY_COUNTDOWN_SECONDS) from None


@shared_task(name="memory.promotion_sweep", ignore_result=True, acks_late=True)
def promotion_sweep_task() -> None:
    from apps.memory.services import promotion_sweep

    promotion_sweep()


@shared_task(name="memory.graduation_sweep", ignore_result=True, acks_late=True)
def graduation_sweep_task() -> None:
    from apps.memory.services import memory_graduation_sweep

    memory_graduation_sweep()
