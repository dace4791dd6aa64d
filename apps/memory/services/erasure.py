"""Erasure of the memory tiers' share of a subject or a tenant (a helper for the tenant-wide
erasure in ``apps.dataops``).

It locks, then deletes (or, with ``dry_run``, only counts) inside the caller's transaction
and returns the rows per kind: session turns, memories (every version), promotion watermarks
and jobs, graduation deferrals, tombstones and, for a tenant, its embedding-drain marker.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from apps.core.db.erasure import erase_kinds
from apps.memory.models import (
    EmbeddingWake,
    GraduationDeferral,
    Memory,
    MemoryTombstone,
    PromotionJob,
    SessionMemory,
    SessionPromotion,
)
from apps.memory.services.scope_lock import (
    lock_memory_scope,
    lock_session_scope,
    lock_tenant_memory_counts,
)
from apps.tenancy.models import Tenant


def memory_erasure_lock(
    *, tenant: Tenant, subject_id: str | None, dry_run: bool
) -> list[uuid.UUID]:
    """Take the locks an erasure needs before it reads anything; return the ids of the
    memories it covers (the knowledge share goes by them)."""
    if subject_id is not None:
        # No write of this subject's memories or turns can interleave with the erasure (the
        # memory scope first, as a batch writing both tiers takes them).
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        lock_session_scope(tenant=tenant, subject_id=subject_id)
    elif not dry_run:
        # Writes in flight finish before any memory row is locked (see the function).
        lock_tenant_memory_counts(tenant=tenant)
    memories = Memory.objects.filter(tenant=tenant)
    if subject_id is not None:
        memories = memories.filter(subject_id=subject_id)
    return list(memories.values_list("pk", flat=True))


def _kinds(*, tenant: Tenant, subject_id: str | None) -> dict[str, QuerySet[Any]]:
    def scoped(model: Any) -> QuerySet[Any]:
        rows = model.objects.filter(tenant=tenant)
        return rows if subject_id is None else rows.filter(subject_id=subject_id)

    memories = scoped(Memory)
    deferrals = GraduationDeferral.objects.filter(tenant=tenant)
    if subject_id is not None:
        deferrals = deferrals.filter(memory__in=memories.values("pk"))
    kinds = {
        "graduation_deferrals": deferrals,
        "promotion_jobs": scoped(PromotionJob),
        "promotion_watermarks": scoped(SessionPromotion),
        "tombstones": scoped(MemoryTombstone),
        "session_turns": scoped(SessionMemory),
        "memories": memories,
    }
    if subject_id is None:
        # A drain marker holds no content, only that a drain is due: it goes with the tenant.
        kinds["embedding_wakes"] = EmbeddingWake.objects.filter(tenant=tenant)
    return kinds


def memory_erase(*, tenant: Tenant, subject_id: str | None, dry_run: bool) -> dict[str, int]:
    """Delete (or count) the memory tiers' share of one subject, or of the whole tenant
    (``subject_id=None``), in an order no foreign key objects to. Call it after
    :func:`memory_erasure_lock`, inside the same transaction."""
    kinds = _kinds(tenant=tenant, subject_id=subject_id)
    if not dry_run:
        # Version links point between rows being deleted; clear them first.
        kinds["memories"].update(superseded_by=None, graduated_article=None)
    return erase_kinds(kinds, dry_run=dry_run)
