"""Thin Celery wrappers (STYLE rule 11): load ids, call one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="tenancy.prune_idempotency_records", ignore_result=True, acks_late=True)
def prune_idempotency_records_task() -> None:
    from apps.tenancy.idempotency import idempotency_prune_expired

    idempotency_prune_expired()
