"""How many requests one subject may have in flight at once (DESIGN §10: limits follow
isolation, per (tenant, subject)).

A counting semaphore per (tenant, subject) in the shared cache, like the heavy-read slots
(:mod:`apps.core.heavy_read`): every web process counts against one semaphore when ``REDIS_URL``
is set; without it each process counts alone, against its share of the cap. A request past
the cap is refused at once, before its body is read or any query runs, so an agent that opens
more connections than the cap gets no more of the web tier's threads and cores than the cap,
and its refusals cost little. Slots carry a TTL so a crashed process cannot leak one for long.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

from apps.core.cache import Slot, give_back_slots, shared_cache_reachable, take_slots
from apps.core.exceptions import CoreErrorCode, RateLimited
from apps.core.rate_limits import RateCharge
from apps.core.telemetry import emit

# Longer than gunicorn's worker timeout: a slot outlives only a request that hung that long.
SLOT_TTL_SECONDS = 120
# A refused client retries after this long: a request in flight usually finishes within it.
RETRY_AFTER_SECONDS = 1


class TooManyRequestsInFlight(RateLimited):
    default_code: str = CoreErrorCode.TOO_MANY_REQUESTS_IN_FLIGHT


def _key(tenant_id: object, subject_id: str) -> str:
    # Hashed: a subject id is any string an agent key names, a cache key is not.
    digest = hashlib.sha256(subject_id.encode("utf-8")).hexdigest()[:32]
    return f"in_flight:{tenant_id}:{digest}"


def subject_in_flight_limit() -> int:
    """``SUBJECT_MAX_IN_FLIGHT``, or without a shared cache (no ``REDIS_URL``, or Redis out
    of reach: :mod:`apps.core.cache`) this process's share of it: each of the
    ``WEB_PROCESSES`` counts alone, so together they still hold about the cap, and one subject
    cannot take every thread of a process."""
    limit = int(settings.SUBJECT_MAX_IN_FLIGHT)
    if shared_cache_reachable() or limit <= 0:  # 0 refuses every request, as a rate limit of 0 does
        return limit
    return max(1, -(-limit // max(1, int(settings.WEB_PROCESSES))))


@contextmanager
def subject_in_flight_slot(
    *,
    tenant_id: object,
    subject_id: str,
    limit: int | None = None,
    charge: RateCharge | None = None,
) -> Iterator[None]:
    """Hold one of the subject's ``SUBJECT_MAX_IN_FLIGHT`` slots for the block, or raise
    :class:`TooManyRequestsInFlight` (429, nothing held) when all are taken.

    With ``charge``, the request's rate-limit hits are counted in the same round trip to the
    shared cache, after the slot: a request refused for being in flight counts nothing, and one
    past its rate limit raises :class:`~apps.core.exceptions.RateLimited` holding nothing."""
    limit = subject_in_flight_limit() if limit is None else limit
    slot = Slot(_key(tenant_id, subject_id), limit, timeout=SLOT_TTL_SECONDS)
    full = take_slots([slot] if charge is None else [slot, charge.slot])
    if full is not None and full.position == 0:
        emit("request.subject_in_flight_refused", {"count": 1})
        raise TooManyRequestsInFlight(
            f"This subject already has {limit} requests in flight; retry when one ends.",
            retry_after_seconds=RETRY_AFTER_SECONDS,
            # Not `limit`: clients read a 429's `limit` as a rate limit's window, which a
            # batch costing more than it could never pass.
            details={"max_in_flight": limit},
        )
    if full is not None and charge is not None:
        raise charge.refusal()
    try:
        yield
    finally:
        give_back_slots([slot])
