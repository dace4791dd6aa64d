"""The session tier: append-only turns with a TTL, pruned on a schedule, under a per-subject
quota of stored turns and bytes."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from apps.core.db.transactions import write_transaction
from apps.core.exceptions import ValidationFailed
from apps.core.telemetry import emit
from apps.memory.exceptions import MemoryErrorCode, SessionQuotaExceeded, SessionTurnNotFound
from apps.memory.models import (
    SESSION_CONTENT_MAX_BYTES,
    SESSION_ID_MAX_LENGTH,
    SessionMemory,
    SessionPromotion,
    SessionRole,
)
from apps.memory.selectors import session_scope_usage
from apps.memory.services.scope_lock import lock_session_scope
from apps.tenancy.models import Tenant
from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX

PRUNE_BATCH_SIZE = 5_000
#: Unicode categories a session id may not hold: control characters and lone surrogates.
NON_PRINTABLE_CATEGORIES = frozenset({"Cc", "Cs"})


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


def _session_id_problem(session_id: str) -> str | None:
    if not session_id.strip():
        return "session_id must not be empty or only whitespace."
    if len(session_id) > SESSION_ID_MAX_LENGTH:
        return f"session_id must be at most {SESSION_ID_MAX_LENGTH} characters."
    if any(unicodedata.category(char) in NON_PRINTABLE_CATEGORIES for char in session_id):
        return "session_id must not contain control characters or unpaired surrogates."
    return None


def session_id_validate(session_id: str, *, details: dict[str, Any] | None = None) -> None:
    """Refuse a session id no session may have: 422 ``invalid_session_id``.

    A session id is 1–200 characters of any printable text: letters of any script, digits,
    spaces, punctuation (``/``, ``.``, ``%``…), emoji. Refused: the empty id, one of only
    whitespace, one over 200 characters, and one holding a control character (U+0000–U+001F,
    U+007F–U+009F) or an unpaired surrogate. An id is kept exactly as given, never trimmed.
    """
    problem = _session_id_problem(session_id)
    if problem is not None:
        raise ValidationFailed(
            problem, code=MemoryErrorCode.INVALID_SESSION_ID, details=details or {}
        )


def _validate(draft: SessionTurnDraft, *, index: int) -> None:
    session_id_validate(draft.session_id, details={"index": index})
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


def session_turn_bytes(*, content: str, metadata: dict[str, Any]) -> int:
    """A turn's size as the session quota counts it: the UTF-8 bytes of its content and of
    its metadata as JSON text, in the form Postgres renders ``jsonb`` (``session_turn_bytes``
    in migration 0026, which counts stored turns; this counts the turns about to be)."""
    rendered = json.dumps(metadata, ensure_ascii=False, separators=(", ", ": "))
    return len(content.encode("utf-8")) + len(rendered.encode("utf-8"))


def _admit(*, tenant: Tenant, subject_id: str, rows: Sequence[SessionMemory]) -> None:
    """Raise :class:`SessionQuotaExceeded` unless ``rows`` fit the subject's stored turns and
    bytes. Call with the subject's session lock held, before inserting."""
    usage = session_scope_usage(tenant=tenant, subject_id=subject_id)
    requested = sum(session_turn_bytes(content=row.content, metadata=row.metadata) for row in rows)
    over = [
        (bound, quota, stored, wanted)
        for bound, quota, stored, wanted in (
            ("turns", settings.SESSION_QUOTA_TURNS, usage.turns, len(rows)),
            ("bytes", settings.SESSION_QUOTA_BYTES, usage.bytes, requested),
        )
        if stored + wanted > quota
    ]
    if not over:
        return
    bound, quota, stored, wanted = over[0]
    emit(
        "memory_session.quota_exceeded",
        {"count": 1},
        {"tenant_id": str(tenant.pk), "bound": bound},
    )
    raise SessionQuotaExceeded(
        f"This subject stores {stored} of {quota} session {bound}; {wanted} more do not fit. "
        "Clear the sessions it no longer needs; expired turns stop counting once pruned.",
        details={"bound": bound, "quota": quota, "stored": stored, "requested": wanted},
    )


def session_append_many(
    *, tenant: Tenant, subject_id: str, drafts: Sequence[SessionTurnDraft]
) -> list[SessionMemory]:
    """Append turns in the given order, all-or-nothing, within the subject's quota of stored
    turns and bytes (``SessionQuotaExceeded`` otherwise, nothing written)."""
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
    if not rows:
        return []
    with write_transaction():
        lock_session_scope(tenant=tenant, subject_id=subject_id)
        _admit(tenant=tenant, subject_id=subject_id, rows=rows)
        # bulk_create assigns seq in list order, so the given order is the read-back order.
        return SessionMemory.objects.bulk_create(rows)


def session_append(*, tenant: Tenant, subject_id: str, draft: SessionTurnDraft) -> SessionMemory:
    return session_append_many(tenant=tenant, subject_id=subject_id, drafts=[draft])[0]


def _session_turns(*, tenant: Tenant, subject_id: str, session_id: str) -> QuerySet[SessionMemory]:
    return SessionMemory.objects.filter(tenant=tenant, subject_id=subject_id, session_id=session_id)


def session_clear(*, tenant: Tenant, subject_id: str, session_id: str) -> int:
    """Delete every turn of the caller's session; returns how many. Unknown = empty = 0.

    Expired turns still held for promotion go too: a cleared session must not come back as
    promoted memories later.
    """
    session_id_validate(session_id)
    with write_transaction():
        deleted, _ = _session_turns(
            tenant=tenant, subject_id=subject_id, session_id=session_id
        ).delete()
    return deleted


def session_turn_delete(
    *, tenant: Tenant, subject_id: str, session_id: str, seq: int | None = None
) -> SessionMemory:
    """Delete one live turn of the caller's session and return it: ``seq``, or the latest
    when ``seq`` is None (a pop). Missing, expired and foreign turns are the same 404.
    """
    session_id_validate(session_id)
    live = _session_turns(tenant=tenant, subject_id=subject_id, session_id=session_id).filter(
        expires_at__gt=timezone.now()
    )
    with write_transaction():
        if seq is None:
            # SKIP LOCKED: two concurrent pops take the last two turns; without it the second
            # would wait on the first's row, find it deleted and report an empty session.
            turn = live.select_for_update(skip_locked=True).order_by("-seq").first()
        else:
            turn = live.select_for_update().filter(seq=seq).first()
        if turn is None:
            raise SessionTurnNotFound("Session turn not found.")
        SessionMemory.objects.filter(pk=turn.pk).delete()
    return turn


@dataclass
class PruneReport:
    """What the prune deleted, by reason, and how many expired turns it held back."""

    deleted: dict[str, int] = field(default_factory=dict)
    #: Expired turns of sessions promotion has not processed yet, kept for it.
    held: int = 0

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


def _delete_in_batches(queryset: QuerySet[SessionMemory]) -> int:
    total = 0
    while True:
        batch = list(queryset.values_list("seq", flat=True)[:PRUNE_BATCH_SIZE])
        if not batch:
            return total
        deleted, _ = SessionMemory.objects.filter(seq__in=batch).delete()
        total += deleted


def session_prune_expired(*, now: datetime | None = None) -> PruneReport:
    """Delete expired turns in bounded batches, except those promotion has yet to see.

    An expired turn is deleted when its session was promoted after the turn was written
    (``promoted``), when its subject is reserved and never promoted (``reserved``), when it is
    its session's only turn, which promotion skips (``single_turn``), or when it expired more
    than ``SESSION_PROMOTION_HOLD_MAX_SECONDS`` ago (``hold_ceiling``). Every other expired
    turn is held, so a short TTL cannot outrun the sweep. A halted tenant's turns are all
    kept until the halt is lifted: a custody halt preserves the tenant's data as it stood, and
    expired turns are already invisible to every read.
    """
    now = now or timezone.now()
    expired = SessionMemory.objects.filter(expires_at__lte=now, tenant__halted_at__isnull=True)
    same_session = {
        "tenant_id": OuterRef("tenant_id"),
        "subject_id": OuterRef("subject_id"),
        "session_id": OuterRef("session_id"),
    }
    reasons: list[tuple[str, QuerySet[SessionMemory]]] = [
        (
            "hold_ceiling",
            expired.filter(
                expires_at__lte=now - timedelta(seconds=settings.SESSION_PROMOTION_HOLD_MAX_SECONDS)
            ),
        ),
        ("reserved", expired.filter(subject_id__startswith=RESERVED_SUBJECT_PREFIX)),
        (
            "promoted",
            expired.filter(
                Exists(
                    SessionPromotion.objects.filter(
                        **same_session, updated_at__gte=OuterRef("created_at")
                    )
                )
            ),
        ),
        (
            "single_turn",
            expired.exclude(
                Exists(SessionMemory.objects.filter(**same_session).exclude(seq=OuterRef("seq")))
            ),
        ),
    ]
    report = PruneReport()
    for reason, queryset in reasons:
        deleted = _delete_in_batches(queryset)
        if deleted:
            report.deleted[reason] = deleted
    report.held = SessionMemory.objects.filter(expires_at__lte=now).count()
    return report
