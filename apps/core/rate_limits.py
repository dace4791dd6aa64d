"""Fixed-window rate limits kept in the shared cache.

With Redis as the cache (REDIS_URL) ``incr`` is atomic across every web process, so every
process counts against one bucket; with the local cache it is atomic within one process, which
is what a single-process ``make run`` needs. Buckets are named by the caller: the APIs key them
by (tenant, subject), so rotating keys does not buy a fresh bucket (DESIGN §10), and failed
authentications by source address.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache

from apps.core.cache import Slot, count, take_slots
from apps.core.exceptions import RateLimited


@dataclass(frozen=True)
class RateBucket:
    """A named limit whose figures are read from settings on every request (so an operator's
    environment and a test's override both apply). ``name`` is what a refused client sees in
    ``details.bucket``."""

    name: str
    limit_setting: str
    window_setting: str

    @property
    def limit(self) -> int:
        return int(getattr(settings, self.limit_setting))

    @property
    def window_seconds(self) -> int:
        return int(getattr(settings, self.window_setting))


def rate_window_key(bucket: str, window_seconds: int, now: float) -> str:
    """The cache key of ``bucket``'s fixed window holding ``now``."""
    return f"ratelimit:{bucket}:{int(now // window_seconds)}"


def _retry_after(window_seconds: int, now: float) -> int:
    return int(window_seconds - (now % window_seconds)) + 1


@dataclass(frozen=True)
class RateCharge:
    """``cost`` hits (a batch counts its items) against ``bucket``'s window at ``now``, refused
    past ``limit`` per window. ``name`` (the bucket without its caller) is reported in a
    refusal's details. A refused charge's hits are given back, so a client that waits out
    ``Retry-After`` is not still paying for the refusal."""

    bucket: str
    limit: int
    window_seconds: int
    cost: int = 1
    name: str | None = None
    now: float = field(default_factory=time.time)

    @property
    def slot(self) -> Slot:
        """The hits as a slot of the window's counter, for :func:`~apps.core.cache.take_slots`
        (never given back: they stay counted until the window ends)."""
        return Slot(
            rate_window_key(self.bucket, self.window_seconds, self.now),
            self.limit,
            timeout=self.window_seconds + 1,
            amount=self.cost,
        )

    def refusal(self) -> RateLimited:
        details: dict[str, Any] = {"limit": self.limit, "window_seconds": self.window_seconds}
        if self.name is not None:
            details["bucket"] = self.name
        return RateLimited(
            "Rate limit exceeded; retry later.",
            retry_after_seconds=_retry_after(self.window_seconds, self.now),
            details=details,
        )


def enforce_rate_limit(charge: RateCharge) -> None:
    """Count ``charge`` in its window (one round trip to the shared cache); raise
    :class:`RateLimited` past the window's limit, having counted nothing."""
    if take_slots([charge.slot]) is not None:
        raise charge.refusal()


def rate_limit_reached(
    *,
    bucket: str,
    limit: int,
    window_seconds: int,
    now: float | None = None,
    hits: int | None = None,
) -> int | None:
    """Seconds until ``bucket``'s window ends if it already holds ``limit`` hits, else None.

    Counts nothing: for limits on outcomes (a failed authentication) that are checked before
    the work and counted after it. ``hits``: the window's count, when the caller read it
    already (at :func:`rate_window_key`, together with other keys).
    """
    now = time.time() if now is None else now
    if hits is None:
        hits = cache.get(rate_window_key(bucket, window_seconds, now), 0)
    return _retry_after(window_seconds, now) if hits >= limit else None


def rate_limit_count(*, bucket: str, window_seconds: int, now: float | None = None) -> int:
    """Count one hit against ``bucket`` without refusing anything; returns the window's hits."""
    now = time.time() if now is None else now
    key = rate_window_key(bucket, window_seconds, now)
    return count(key, 1, timeout=window_seconds + 1)


def request_source(meta: Mapping[str, Any]) -> str:
    """The address a request came from: the TCP peer, or behind ``TRUSTED_PROXY_COUNT``
    proxies the address the outermost of them saw.

    Each proxy appends the address it was connected from to ``X-Forwarded-For``, so with N
    trusted proxies the client is the N-th entry from the right; anything left of it was
    written by the client and is not believed. A header with fewer entries did not pass
    through every proxy, and the peer is used.
    """
    peer = str(meta.get("REMOTE_ADDR") or "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies <= 0:
        return peer
    forwarded = [part.strip() for part in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    forwarded = [part for part in forwarded if part]
    return forwarded[-proxies] if len(forwarded) >= proxies else peer
