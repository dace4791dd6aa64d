"""Services behind the ``Idempotency-Key`` header (DESIGN §10: writes are retry-safe).

A write that carries a key first *claims* it: one row per (tenant, subject, key), created
under the unique constraint, so of two concurrent requests with the same key exactly one
gets the claim and runs; the other is told the key is in progress and writes nothing. The
claimant then *completes* the record with its 2xx response, which later requests with the
same key and body get back verbatim, or *releases* it when the request failed (an error
wrote nothing, so a retry must be free to run).

The claim commits on its own, before the request's transaction opens: it has to be visible
to a concurrent duplicate while the first request is still running. The completion runs in
the request's transaction (``apps.core.db.transactions.unit_of_work``), so the write
and its kept response commit together: a connection lost before that commit leaves the
claim in progress and no write, and the retry that takes it over after the lease runs once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.tenancy.exceptions import IdempotencyKeyInProgress, IdempotencyKeyReused
from apps.tenancy.models import IdempotencyRecord, Tenant

PRUNE_BATCH_SIZE = 1000
#: What a request that finds the key in flight is told to wait before retrying.
IN_PROGRESS_RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True)
class IdempotencyClaim:
    """This request owns the key: run the write, then complete or release the claim."""

    record_id: int
    claim_token: uuid.UUID


@dataclass(frozen=True)
class IdempotencyReplay:
    """The key already answered this request: send this response again, write nothing."""

    status_code: int
    body: Any


def _stale(now: datetime) -> Q:
    expired = Q(claimed_at__lte=now - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS))
    abandoned = Q(
        status_code__isnull=True,
        claimed_at__lte=now - timedelta(seconds=settings.IDEMPOTENCY_LEASE_SECONDS),
    )
    return expired | abandoned


def idempotency_claim(
    *,
    tenant: Tenant,
    subject_id: str,
    key: str,
    fingerprint: str,
    now: datetime | None = None,
) -> IdempotencyClaim | IdempotencyReplay:
    """Claim ``key`` for a request whose method, path and body hash to ``fingerprint``.

    Returns the claim, or the first response when the key already answered the same request.
    Raises ``IdempotencyKeyReused`` (422) when it answered another request, and
    ``IdempotencyKeyInProgress`` (409) while its first request is still running. A record
    past its 24 h, or a claim whose request never answered within the lease, is taken over.
    """
    now = now or timezone.now()
    token = uuid.uuid4()
    record, created = IdempotencyRecord.objects.for_tenant(tenant).get_or_create(
        tenant=tenant,
        subject_id=subject_id,
        key=key,
        defaults={"fingerprint": fingerprint, "claim_token": token, "claimed_at": now},
    )
    if created:
        return IdempotencyClaim(record_id=record.pk, claim_token=token)
    # The WHERE clause is the guard: of two requests taking over one stale record, one wins.
    taken = (
        IdempotencyRecord.objects.for_tenant(tenant)
        .filter(_stale(now), pk=record.pk)
        .update(
            fingerprint=fingerprint,
            claim_token=token,
            claimed_at=now,
            status_code=None,
            response_body=None,
            updated_at=now,
        )
    )
    if taken:
        return IdempotencyClaim(record_id=record.pk, claim_token=token)
    if record.claimed_at <= now - timedelta(seconds=settings.IDEMPOTENCY_LEASE_SECONDS):
        # It looked stale when read, yet another request took it over first: judge by theirs.
        record.refresh_from_db()
    if record.fingerprint != fingerprint:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for a different request; use a new key."
        )
    if record.status_code is None:
        raise IdempotencyKeyInProgress(
            "A request with this Idempotency-Key is still in progress; retry shortly.",
            headers={"Retry-After": str(IN_PROGRESS_RETRY_AFTER_SECONDS)},
            details={"retry_after_seconds": IN_PROGRESS_RETRY_AFTER_SECONDS},
        )
    return IdempotencyReplay(status_code=record.status_code, body=record.response_body)


def idempotency_complete(
    *, tenant: Tenant, claim: IdempotencyClaim, status_code: int, body: Any
) -> None:
    """Store the claimant's response; a claim taken over meanwhile is left to its new owner."""
    IdempotencyRecord.objects.for_tenant(tenant).filter(
        pk=claim.record_id, claim_token=claim.claim_token
    ).update(status_code=status_code, response_body=body, updated_at=timezone.now())


def idempotency_release(*, tenant: Tenant, claim: IdempotencyClaim) -> None:
    """Give the key back after a failed request, so a retry runs instead of waiting."""
    IdempotencyRecord.objects.for_tenant(tenant).filter(
        pk=claim.record_id, claim_token=claim.claim_token
    ).delete()


def idempotency_prune_expired(*, now: datetime | None = None) -> int:
    """Delete records past the replay window, in bounded batches. Returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    total = 0
    while True:
        batch = list(
            IdempotencyRecord.objects.filter(claimed_at__lte=cutoff).values_list("pk", flat=True)[
                :PRUNE_BATCH_SIZE
            ]
        )
        if not batch:
            return total
        deleted, _ = IdempotencyRecord.objects.filter(pk__in=batch).delete()
        total += deleted
