"""The session tier: append-only turns with a TTL, pruned on a schedule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.exceptions import ValidationFailed
from apps.memory.exceptions import MemoryErrorCode
from apps.memory.models import (
    SESSION_CONTENT_MAX_BYTES,
    SESSION_ID_MAX_LENGTH,
    SessionMemory,
    SessionRole,
)
from apps.tenancy.models import Tenant

PRUNE_BATCH_SIZE = 5_000


@dataclass(frozen=True)
class SessionTurnDraft:
    session_id: str
    content: str
    role: str = SessionRole.USER
    metadata: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None
    ttl_seconds: int | None = None
    #: When the turn was said; the time of the write when not given.
    occurred_at: datetime | None = None


def _expiry(draft: SessionTurnDraft, *, now: datetime, index: int) -> datetime:
    if draft.expires_at is None and draft.ttl_seconds is None:
        raise ValidationFailed(
            "A session turn needs expires_at or ttl_seconds.",
            code=MemoryErrorCode.EXPIRES_AT_REQUIRED,
            details={"index": index},
        )
    expires_at = draft.expires_at or now + timedelta(seconds=draft.ttl_seconds or 0)
    max_ttl = settings.SESSION_MAX_TTL_SECONDS
    if expires_at <= now or expires_at > now + timedelta(seconds=max_ttl):
        raise ValidationFailed(
            f"expires_at must be in the future and at most {max_ttl} seconds away.",
            code=MemoryErrorCode.INVALID_EXPIRES_AT,
            details={"index": index},
        )
    return expires_at


def _validate(draft: SessionTurnDraft, *, index: int) -> None:
    if not draft.session_id.strip() or len(draft.session_id) > SESSION_ID_MAX_LENGTH:
        raise ValidationFailed(
            f"session_id must be 1–{SESSION_ID_MAX_LENGTH} characters.",
            code=MemoryErrorCode.INVALID_SESSION_ID,
            details={"index": index},
        )
    if draft.role not in SessionRole.values:
        raise ValidationFailed(
            f"role must be one of {SessionRole.values}.", details={"index": index}
        )
    if not draft.content:
        raise ValidationFailed("content must not be empty.", details={"index": index})
    if len(draft.content.encode("utf-8")) > SESSION_CONTENT_MAX_BYTES:
        raise ValidationFailed(
            f"content is larger than {SESSION_CONTENT_MAX_BYTES} bytes.",
            code=MemoryErrorCode.CONTENT_TOO_LARGE,
            details={"index": index, "max_bytes": SESSION_CONTENT_MAX_BYTES},
        )


def session_drafts_validate(*, drafts: Sequence[SessionTurnDraft]) -> None:
    """Every check :func:`session_append_many` makes, without writing anything."""
    now = timezone.now()
    for index, draft in enumerate(drafts):
        _validate(draft, index=index)
        _expiry(draft, now=now, index=index)


def session_append_many(
    *, tenant: Tenant, subject_id: str, drafts: Sequence[SessionTurnDraft]
) -> list[SessionMemory]:
    """Append turns in the given order, all-or-nothing."""
    now = timezone.now()
    rows = []
    for index, draft in enumerate(drafts):
        _validate(draft, index=index)
        rows.append(
            SessionMemory(
                tenant=tenant,
                subject_id=subject_id,
                session_id=draft.session_id,
                role=draft.role,
                content=draft.content,
                metadata=dict(draft.metadata),
                expires_at=_expiry(draft, now=now, index=index),
                occurred_at=draft.occurred_at or now,
            )
        )
    with transaction.atomic(using=PRIMARY):
        # bulk_create assigns seq in list order, so the given order is the read-back order.
        return SessionMemory.objects.bulk_create(rows)


def session_append(*, tenant: Tenant, subject_id: str, draft: SessionTurnDraft) -> SessionMemory:
    return session_append_many(tenant=tenant, subject_id=subject_id, drafts=[draft])[0]


def session_prune_expired(*, now: datetime | None = None) -> int:
    """Delete expired turns in bounded batches. Returns how many rows were deleted."""
    now = now or timezone.now()
    total = 0
    while True:
        batch = list(
            SessionMemory.objects.filter(expires_at__lte=now).values_list("seq", flat=True)[
                :PRUNE_BATCH_SIZE
            ]
        )
        if not batch:
            return total
        deleted, _ = SessionMemory.objects.filter(seq__in=batch).delete()
        total += deleted
