"""Erasure with receipts: every row of one subject, or of one tenant, in one transaction,
then a verification pass that re-counts every kind and must find none.

Scope-owned tables (docs/operators.md, "Erasure"; the test checks them against
``information_schema`` so a new table cannot be forgotten):

* subject: its session turns, memories (every version), promotion watermarks and jobs,
  graduation deferrals (keyed by memory), tombstones, idempotency records, its owner-visible
  articles and every article whose source is one of its memories, those articles' links and
  access events, and the access events it caused; its shown-history is dropped after commit.
* tenant: every row of every tenant-scoped table above, plus projects and re-embed runs.
  Kept: the tenant row and its API keys (access configuration, no content; revoke them with
  ``api_key_revoke``) and the receipts themselves (no content).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

from apps.core.db.erasure import erase_kinds
from apps.core.db.on_commit import after_commit
from apps.core.db.transactions import write_transaction
from apps.core.telemetry import emit
from apps.dataops.models import ErasureReceipt, ErasureScope, ReembedRun
from apps.knowledge.history import history_forget_subject, history_forget_tenant
from apps.knowledge.services import knowledge_erase, lock_tenant_article_counts
from apps.memory.services import memory_erase, memory_erasure_lock
from apps.projects.services import project_erase_all
from apps.tenancy.models import Tenant
from apps.tenancy.services import idempotency_erase


@dataclass(frozen=True)
class Erasure:
    """A receipt (stored, unless ``dry_run``) and what was, or would be, erased."""

    receipt: dict[str, Any]
    dry_run: bool


def subject_digest(subject_id: str) -> str:
    return hashlib.sha256(subject_id.encode("utf-8")).hexdigest()


def _sweep(
    *, tenant: Tenant, subject_id: str | None, memory_ids: list[uuid.UUID], dry_run: bool
) -> dict[str, int]:
    """Delete (or count) every kind, in an order no foreign key objects to."""
    counts = knowledge_erase(
        tenant=tenant, subject_id=subject_id, memory_ids=memory_ids, dry_run=dry_run
    )
    counts.update(memory_erase(tenant=tenant, subject_id=subject_id, dry_run=dry_run))
    counts["idempotency_records"] = idempotency_erase(
        tenant=tenant, subject_id=subject_id, dry_run=dry_run
    )
    if subject_id is None:
        reembed_runs = ReembedRun.objects.filter(tenant=tenant)
        counts.update(erase_kinds({"reembed_runs": reembed_runs}, dry_run=dry_run))
        counts["projects"] = project_erase_all(tenant=tenant, dry_run=dry_run)
    return dict(sorted(counts.items()))


def _erase(*, tenant: Tenant, subject_id: str | None, requested_by: str, dry_run: bool) -> Erasure:
    scope: dict[str, Any] = {
        "type": ErasureScope.TENANT if subject_id is None else ErasureScope.SUBJECT,
        "tenant_id": str(tenant.pk),
    }
    if subject_id is not None:
        scope["subject_sha256"] = subject_digest(subject_id)
    with write_transaction():
        # The tenant's article counts are taken before any row and after the subject's scope
        # lock, in the order every writer of them takes it (lock_tenant_article_counts).
        if subject_id is None and not dry_run:
            lock_tenant_article_counts(tenant=tenant)
        memory_ids = memory_erasure_lock(tenant=tenant, subject_id=subject_id, dry_run=dry_run)
        if subject_id is not None and not dry_run:
            lock_tenant_article_counts(tenant=tenant)
        counts = _sweep(
            tenant=tenant, subject_id=subject_id, memory_ids=memory_ids, dry_run=dry_run
        )
        if dry_run:
            receipt = {
                "id": None,
                "scope": scope,
                "requested_by": requested_by,
                "created_at": None,
                "counts": counts,
                "verified": False,
            }
            return Erasure(receipt=receipt, dry_run=True)
        # The verification pass: the same selection, counted again, must find nothing.
        left = _sweep(tenant=tenant, subject_id=subject_id, memory_ids=memory_ids, dry_run=True)
        verified = not any(left.values())
        stored = ErasureReceipt.objects.create(
            scope=scope, requested_by=requested_by, counts=counts, verified=verified
        )
        if subject_id is None:
            after_commit(lambda: history_forget_tenant(tenant_id=tenant.pk))
        else:
            after_commit(lambda: history_forget_subject(tenant_id=tenant.pk, subject_id=subject_id))
    emit(
        "memory_erasure.erased",
        {"rows": sum(counts.values())},
        {"tenant_id": str(tenant.pk), "scope": scope["type"], "verified": verified},
    )
    return Erasure(receipt=erasure_receipt_render(stored), dry_run=False)


def erasure_receipt_render(receipt: ErasureReceipt) -> dict[str, Any]:
    return {
        "id": str(receipt.pk),
        "scope": receipt.scope,
        "requested_by": receipt.requested_by,
        "created_at": receipt.created_at.isoformat(),
        "counts": receipt.counts,
        "verified": receipt.verified,
    }


def erase_subject(
    *, tenant: Tenant, subject_id: str, requested_by: str, dry_run: bool = False
) -> Erasure:
    """Erase every row of ``(tenant, subject_id)`` (see the module docstring) and store a
    receipt; ``dry_run`` counts the same rows and changes nothing."""
    return _erase(tenant=tenant, subject_id=subject_id, requested_by=requested_by, dry_run=dry_run)


def erase_tenant(*, tenant: Tenant, requested_by: str, dry_run: bool = False) -> Erasure:
    """Erase every row of ``tenant`` (see the module docstring) and store a receipt."""
    return _erase(tenant=tenant, subject_id=None, requested_by=requested_by, dry_run=dry_run)


def render_erasure(erasure: Erasure) -> str:
    """The human form of a receipt, for the operator commands."""
    receipt = erasure.receipt
    head = (
        "Dry run: would erase"
        if erasure.dry_run
        else f"Erased ({'verified' if receipt['verified'] else 'NOT VERIFIED'}), receipt "
        f"{receipt['id']}:"
    )
    rows = [f"  {kind:<24} {count}" for kind, count in receipt["counts"].items()]
    return "\n".join([head, *rows])
