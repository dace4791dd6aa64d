from __future__ import annotations

import pytest

from apps.providers import breaker
from tests.providers.fake_http import fake_http

__all__ = ["fake_http"]


class Clock:
    """A hand-driven clock for the circuit breaker, so no test sleeps through a reset window."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    frozen = Clock()
    monkeypatch.setattr(breaker, "_now", frozen)
    return frozen
