"""Fixed-window rate limits kept in the shared cache.

With Redis as the cache (REDIS_URL) ``incr`` is atomic across every web process, so every
process counts against one bucket; with the local cache it is atomic within one process, which
is what a single-process ``make run`` needs. Buckets are named by the caller: the APIs key them
by (tenant, subject), so rotating keys does not buy a fresh bucket (DESIGN §10).
"""

from __future__ import annotations

import contextlib
import time

from django.core.cache import cache

from apps.core.exceptions import RateLimited


def enforce_rate_limit(
    *, bucket: str, limit: int, window_seconds: int, cost: int = 1, now: float | None = None
) -> int:
    """Count ``cost`` hits (a batch counts its items) against ``bucket``; raise
    :class:`RateLimited` past ``limit`` per window. A refused request's hits are given back,
    so a client that waits out ``Retry-After`` is not still paying for the refusal.

    Returns the number of hits in the current window, including these.
    """
    now = time.time() if now is None else now
    window = int(now // window_seconds)
    key = f"ratelimit:{bucket}:{window}"
    cache.add(key, 0, timeout=window_seconds + 1)
    try:
        hits = cache.incr(key, cost)
    except ValueError:  # the key expired between add and incr
        cache.add(key, cost, timeout=window_seconds + 1)
        hits = cost
    if hits > limit:
        with contextlib.suppress(ValueError):  # expired meanwhile: nothing to give back
            cache.decr(key, cost)
        retry_after = int(window_seconds - (now % window_seconds)) + 1
        raise RateLimited(
            "Rate limit exceeded; retry later.",
            retry_after_seconds=retry_after,
            details={"limit": limit, "window_seconds": window_seconds},
        )
    return hits
