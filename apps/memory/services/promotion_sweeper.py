"""The promotion sweep: reap lost jobs, then offer idle sessions to promotion, fairly.

Bounded (``PROMOTION_SWEEP_MAX_SESSIONS`` per run), round-robin across tenants (every tenant's
most urgent session before any tenant's second), and isolated: one session whose trigger
raises is counted and skipped, never the end of the run. A session whose last job failed is
not offered again for ``PROMOTION_SWEEP_RETRY_AFTER_SECONDS``, so a session that always fails
cannot hold the head of the queue run after run. Halted tenants are left alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, Max, Min, OuterRef, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from apps.core.telemetry import emit
from apps.memory.models import PromotionJob, PromotionJobStatus, PromotionTrigger, SessionMemory
from apps.memory.services.promotion import promotion_request
from apps.memory.services.promotion_lease import promotion_reap_stale
from apps.tenancy.models import Tenant
from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX

logger = logging.getLogger(__name__)


@dataclass
class SweepResult:
    considered: int = 0
    enqueued: int = 0
    errors: int = 0
    requeued: int = 0
    failed_stale: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    tenants: dict[str, int] = field(default_factory=dict)  # sessions considered per tenant


def _candidates(now: datetime) -> list[dict[str, Any]]:
    """Idle sessions inside the window, most urgent first within each tenant, interleaved.

    "Most urgent" is the earliest expiry among a session's turns, so the session nearest its
    prune deadline is never starved behind newer ones of the same tenant.
    """
    recently_failed = PromotionJob.objects.filter(
        tenant_id=OuterRef("tenant_id"),
        subject_id=OuterRef("subject_id"),
        session_id=OuterRef("session_id"),
        status=PromotionJobStatus.FAILED,
        finished_at__gt=now - timedelta(seconds=settings.PROMOTION_SWEEP_RETRY_AFTER_SECONDS),
    )
    sessions = (
        # Expired turns still present are held for this sweep (session_prune_expired).
        SessionMemory.objects.filter(tenant__halted_at__isnull=True)
        .exclude(subject_id__startswith=RESERVED_SUBJECT_PREFIX)
        .exclude(Exists(recently_failed))
        .values("tenant_id", "subject_id", "session_id")
        .annotate(last_turn=Max("created_at"), deadline=Min("expires_at"))
        .filter(
            last_turn__gte=now - timedelta(seconds=settings.PROMOTION_SWEEP_WINDOW_SECONDS),
            last_turn__lte=now - timedelta(seconds=settings.PROMOTION_SWEEP_IDLE_SECONDS),
        )
        .annotate(
            turn=Window(
                RowNumber(),
                partition_by=[F("tenant_id")],
                order_by=[F("deadline").asc(), F("subject_id").asc(), F("session_id").asc()],
            )
        )
        .order_by("turn", "deadline", "tenant_id")[: settings.PROMOTION_SWEEP_MAX_SESSIONS]
    )
    return [dict(row) for row in sessions]


def promotion_sweep(*, now: datetime | None = None) -> SweepResult:
    """Re-queue or fail stale jobs, then enqueue promotion for idle sessions across tenants."""
    now = now or timezone.now()
    result = SweepResult()
    reaped = promotion_reap_stale(now=now)
    result.requeued, result.failed_stale = reaped.requeued, reaped.failed
    tenants: dict[Any, Tenant] = {}
    for row in _candidates(now):
        tenant_key = str(row["tenant_id"])
        result.considered += 1
        result.tenants[tenant_key] = result.tenants.get(tenant_key, 0) + 1
        try:
            tenant = tenants.get(row["tenant_id"]) or Tenant.objects.get(pk=row["tenant_id"])
            tenants[row["tenant_id"]] = tenant
            request = promotion_request(
                tenant=tenant,
                subject_id=row["subject_id"],
                session_id=row["session_id"],
                trigger=PromotionTrigger.SWEEP,
            )
        except Exception:
            # One bad session must not cost every session behind it its promotion.
            logger.exception("promotion sweep: session of tenant %s failed", tenant_key)
            result.errors += 1
            continue
        result.enqueued += int(request.enqueued)
        result.reasons[request.reason] = result.reasons.get(request.reason, 0) + 1
    emit(
        "memory_promotion.sweep",
        {"considered": result.considered, "enqueued": result.enqueued, "errors": result.errors},
        {"requeued": result.requeued, "failed_stale": result.failed_stale},
    )
    return result
