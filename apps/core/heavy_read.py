"""Concurrency caps for heavy reads (kNN recall, hybrid search), DESIGN §2: per tenant, and per
subject inside its tenant.

Counting semaphores in the shared cache. When a subject already has its share of heavy reads
in flight, or its tenant has the tenant's whole cap, the next one is *shed*:
:class:`HeavyReadShed` is raised at once and the caller degrades (keyword fallback, or the other
half of a merged recall). The subject's share is taken first, so a subject past it never holds
a tenant slot even for a moment: one agent's flood of recalls leaves the rest of the tenant's
slots to its other agents. Slots carry a TTL so a crashed process cannot leak one forever.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings

from apps.core.cache import Slot, give_back_slots, take_slots
from apps.core.telemetry import emit

SLOT_TTL_SECONDS = 60


class HeavyReadShed(Exception):
    reason = "heavy_read_shed"

    def __init__(self, message: str, *, scope: str) -> None:
        super().__init__(message)
        #: Whose cap was full: ``subject`` or ``tenant``.
        self.scope = scope


@contextmanager
def heavy_read_slot(
    *,
    tenant_id: object,
    subject_id: str | None = None,
    limit: int | None = None,
    subject_limit: int | None = None,
) -> Iterator[None]:
    """Hold one of the subject's heavy-read slots (when ``subject_id`` is given) and one of the
    tenant's for the block, or raise :class:`HeavyReadShed` (nothing held). Both are taken in
    one round trip to the cache and given back in another (:func:`~apps.core.cache.take_slots`)."""
    limit = settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT if limit is None else limit
    caps = [_Cap(f"heavy_read:inflight:{tenant_id}", limit, "tenant", f"tenant {tenant_id}")]
    if subject_id is not None:
        # Hashed: a subject id is any string an agent key names, a cache key is not.
        digest = hashlib.sha256(subject_id.encode("utf-8")).hexdigest()[:32]
        share = (
            settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT
            if subject_limit is None
            else subject_limit
        )
        owner = f"subject {subject_id!r} of tenant {tenant_id}"
        # The subject's share first: a subject past it never holds a tenant slot.
        caps.insert(0, _Cap(f"heavy_read:inflight:{tenant_id}:{digest}", share, "subject", owner))
    slots = [Slot(cap.key, cap.limit, timeout=SLOT_TTL_SECONDS) for cap in caps]
    full = take_slots(slots)
    if full is not None:
        cap = caps[full.position]
        emit(f"heavy_read.{cap.scope}_shed", {"count": 1})
        raise HeavyReadShed(
            f"{cap.owner} has {full.held - 1} heavy reads in flight", scope=cap.scope
        )
    try:
        yield
    finally:
        give_back_slots(slots)


@dataclass(frozen=True)
class _Cap:
    """One counting semaphore a heavy read takes a slot of."""

    key: str
    limit: int
    #: Whose cap it is (``subject`` or ``tenant``), and who a refusal names.
    scope: str
    owner: str
