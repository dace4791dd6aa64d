"""Fixed-window rate limits kept in the shared cache.

With Redis as the cache (REDIS_URL) ``incr`` is atomic across every web process; with the local
cache it is atomic within one process, which is what a single-process ``make run`` needs.
"""

from __future__ import annotations

import time

from django.core.cache import cache

from apps.core.exceptions import RateLimited


def enforce_rate_limit(
    *, bucket: str, limit: int, window_seconds: int, now: float | None = None
) -> int:
    """Count one hit against ``bucket``; raise :class:`RateLimited` past ``limit`` per window.

    Returns the number of hits in the current window, including this one.
    """
    now = time.time() if now is None else now
    window = int(now // window_seconds)
    key = f"ratelimit:{bucket}:{window}"
    cache.add(key, 0, timeout=window_seconds + 1)
    try:
        hits = cache.incr(key)
    except ValueError:  # the key expired between add and incr
        cache.add(key, 1, timeout=window_seconds + 1)
        hits = 1
    if hits > limit:
        retry_after = int(window_seconds - (now % window_seconds)) + 1
        raise RateLimited(
            "Rate limit exceeded; retry later.",
            retry_after_seconds=retry_after,
            details={"limit": limit, "window_seconds": window_seconds},
        )
    return hits
