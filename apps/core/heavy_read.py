"""Per-tenant concurrency cap for heavy reads (kNN recall, hybrid search), DESIGN §2.

A counting semaphore in the shared cache. When a tenant already has ``limit`` heavy reads in
flight, the next one is *shed*: :class:`HeavyReadShed` is raised at once and the caller
degrades (keyword fallback, or the other half of a merged recall). Slots carry a TTL so a
crashed process cannot leak one forever.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

from django.conf import settings
from django.core.cache import cache

SLOT_TTL_SECONDS = 60


class HeavyReadShed(Exception):
    reason = "heavy_read_shed"


@contextmanager
def heavy_read_slot(*, tenant_id: object, limit: int | None = None) -> Iterator[None]:
    limit = settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT if limit is None else limit
    key = f"heavy_read:inflight:{tenant_id}"
    cache.add(key, 0, timeout=SLOT_TTL_SECONDS)
    try:
        in_flight = cache.incr(key)
    except ValueError:
        cache.add(key, 1, timeout=SLOT_TTL_SECONDS)
        in_flight = 1
    try:
        if in_flight > limit:
            raise HeavyReadShed(f"tenant {tenant_id} has {in_flight - 1} heavy reads in flight")
        yield
    finally:
        with suppress(ValueError):  # the slot key expired: nothing to release
            cache.decr(key)
