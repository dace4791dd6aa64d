"""A circuit breaker whose state lives in the Django cache.

With Redis as the cache every web and worker process shares one view of an endpoint, so an
outage seen by one process fails fast everywhere instead of each of them burning a full
HTTP timeout per call.

States: ``closed`` → ``open`` after ``failure_threshold`` consecutive failures →
``half_open`` once ``reset_seconds`` have passed (exactly one trial call, guarded by
``cache.add``) → ``closed`` when the trial succeeds, ``open`` again when it fails.

Only a provider fault moves it (DESIGN §10): ``classify`` sorts each exception into a
``fault`` (counted), ``answered`` (the endpoint replied, so it counts as a success) or
``neutral`` (says nothing about the endpoint — typically the caller's own input — and changes
nothing). Without a ``classify`` every exception is a fault.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from django.conf import settings
from django.core.cache import cache

from apps.core.telemetry import emit

logger = logging.getLogger("engram.providers")

T = TypeVar("T")
BreakerState = Literal["closed", "open", "half_open"]
Verdict = Literal["fault", "answered", "neutral"]

# Tests monkeypatch this (or pass ``clock=``) instead of sleeping through the reset window.
_now: Callable[[], float] = time.time

# State of an endpoint nobody has called for a day is not worth keeping; expiring it means
# "closed", which is the right guess after that long.
_STATE_TTL_SECONDS = 24 * 60 * 60


def _every_error_is_a_fault(exc: BaseException) -> Verdict:
    return "fault"


class CircuitOpen(Exception):
    """The breaker refused the call without running it."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"Circuit {name!r} is open.")


class CircuitBreaker:
    def __init__(
        self,
        name: str,
        *,
        failure_threshold: int | None = None,
        reset_seconds: int | None = None,
        clock: Callable[[], float] | None = None,
        classify: Callable[[BaseException], Verdict] | None = None,
    ) -> None:
        self.name = name
        self.failure_threshold = (
            failure_threshold
            if failure_threshold is not None
            else settings.PROVIDER_BREAKER_FAILURE_THRESHOLD
        )
        self.reset_seconds = (
            reset_seconds if reset_seconds is not None else settings.PROVIDER_BREAKER_RESET_SECONDS
        )
        self._clock_override = clock
        self._classify = classify or _every_error_is_a_fault
        # Names carry URLs; hash them so any cache backend accepts the key.
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]
        prefix = f"providers:breaker:{digest}"
        self._failures_key = f"{prefix}:failures"
        self._opened_at_key = f"{prefix}:opened_at"
        self._trial_key = f"{prefix}:trial"
        # The trial lock must outlive the trial call (bounded by the HTTP timeout), and expire
        # on its own if the process running the trial dies.
        self._trial_ttl = max(
            self.reset_seconds, math.ceil(settings.PROVIDER_HTTP_TIMEOUT_SECONDS) + 1
        )

    def state(self) -> BreakerState:
        return self._state_at(cache.get(self._opened_at_key))

    def reset(self) -> None:
        cache.delete_many([self._failures_key, self._opened_at_key, self._trial_key])

    def call(self, fn: Callable[[], T]) -> T:
        # One round trip on the happy path: no writes unless something changes.
        current = cache.get_many([self._failures_key, self._opened_at_key])
        state = self._state_at(current.get(self._opened_at_key))
        if state == "open":
            raise CircuitOpen(self.name)
        is_trial = state == "half_open"
        if is_trial and not cache.add(self._trial_key, 1, timeout=self._trial_ttl):
            # Another process holds the one trial; everyone else still fails fast.
            raise CircuitOpen(self.name)
        had_failures = bool(current.get(self._failures_key))
        try:
            try:
                result = fn()
            except Exception as exc:
                verdict = self._classify(exc)
                if verdict == "fault":
                    self._record_failure(is_trial=is_trial)
                elif verdict == "answered":
                    self._record_success(had_failures=had_failures, is_trial=is_trial)
                raise
            self._record_success(had_failures=had_failures, is_trial=is_trial)
            return result
        finally:
            if is_trial:
                cache.delete(self._trial_key)

    def _now(self) -> float:
        return (self._clock_override or _now)()

    def _state_at(self, opened_at: float | None) -> BreakerState:
        if opened_at is None:
            return "closed"
        if self._now() - opened_at < self.reset_seconds:
            return "open"
        return "half_open"

    def _record_success(self, *, had_failures: bool, is_trial: bool) -> None:
        if not (had_failures or is_trial):
            return
        cache.delete_many([self._failures_key, self._opened_at_key])
        if is_trial:
            logger.info("circuit %s closed after a successful trial", self.name)
            emit("provider_breaker.closed", metadata={"breaker": self.name})

    def _record_failure(self, *, is_trial: bool) -> None:
        now = self._now()
        if is_trial:
            cache.set(self._opened_at_key, now, timeout=_STATE_TTL_SECONDS)
            logger.warning("circuit %s re-opened: the trial call failed", self.name)
            emit("provider_breaker.opened", metadata={"breaker": self.name, "trial": True})
            return
        cache.add(self._failures_key, 0, timeout=_STATE_TTL_SECONDS)
        try:
            failures = cache.incr(self._failures_key)
        except ValueError:
            # The counter expired between add() and incr(); this failure starts a new run.
            cache.set(self._failures_key, 1, timeout=_STATE_TTL_SECONDS)
            failures = 1
        # add(): when several processes cross the threshold together, the first one's
        # timestamp stands, so the reset window is not pushed forward by stragglers.
        if failures >= self.failure_threshold and cache.add(
            self._opened_at_key, now, timeout=_STATE_TTL_SECONDS
        ):
            logger.warning("circuit %s opened after %d consecutive failures", self.name, failures)
            emit("provider_breaker.opened", metadata={"breaker": self.name, "trial": False})
