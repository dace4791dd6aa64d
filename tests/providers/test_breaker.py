from __future__ import annotations

import pytest

from apps.providers.breaker import CircuitBreaker, CircuitOpen
from apps.providers.exceptions import ProviderRejected
from apps.providers.faults import classify_provider_error
from tests.providers.conftest import Clock


class Endpoint:
    """A callable standing in for a provider: counts calls, fails while ``failing``."""

    def __init__(self) -> None:
        self.calls = 0
        self.failing = False

    def __call__(self) -> str:
        self.calls += 1
        if self.failing:
            raise ConnectionError("endpoint down")
        return "ok"


def _fail(breaker: CircuitBreaker, endpoint: Endpoint, times: int) -> None:
    endpoint.failing = True
    for _ in range(times):
        with pytest.raises(ConnectionError):
            breaker.call(endpoint)


def test_starts_closed_and_passes_results_through(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=3, reset_seconds=30)
    endpoint = Endpoint()

    assert breaker.state() == "closed"
    assert breaker.call(endpoint) == "ok"
    assert endpoint.calls == 1


def test_opens_after_threshold_consecutive_failures(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=3, reset_seconds=30)
    endpoint = Endpoint()

    _fail(breaker, endpoint, 2)
    assert breaker.state() == "closed"
    _fail(breaker, endpoint, 1)

    assert breaker.state() == "open"
    assert endpoint.calls == 3


def test_open_circuit_refuses_without_calling(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=2, reset_seconds=30)
    endpoint = Endpoint()
    _fail(breaker, endpoint, 2)
    endpoint.failing = False

    with pytest.raises(CircuitOpen) as excinfo:
        breaker.call(endpoint)

    assert excinfo.value.name == "t"
    assert endpoint.calls == 2


def test_a_success_resets_the_consecutive_count(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=3, reset_seconds=30)
    endpoint = Endpoint()
    _fail(breaker, endpoint, 2)
    endpoint.failing = False
    breaker.call(endpoint)

    _fail(breaker, endpoint, 2)

    assert breaker.state() == "closed"
    assert endpoint.calls == 5


def test_half_opens_once_the_reset_time_has_passed(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=1, reset_seconds=30)
    _fail(breaker, Endpoint(), 1)

    clock.advance(29.9)
    assert breaker.state() == "open"
    clock.advance(0.1)
    assert breaker.state() == "half_open"


def test_successful_trial_closes_the_circuit(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=2, reset_seconds=30)
    endpoint = Endpoint()
    _fail(breaker, endpoint, 2)
    clock.advance(30)
    endpoint.failing = False

    assert breaker.call(endpoint) == "ok"

    assert breaker.state() == "closed"
    # The failure count started over: one failure does not re-open it.
    _fail(breaker, endpoint, 1)
    assert breaker.state() == "closed"


def test_failed_trial_reopens_for_a_full_reset_window(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=2, reset_seconds=30)
    endpoint = Endpoint()
    _fail(breaker, endpoint, 2)
    clock.advance(30)

    _fail(breaker, endpoint, 1)

    assert breaker.state() == "open"
    clock.advance(29.9)
    assert breaker.state() == "open"
    with pytest.raises(CircuitOpen):
        breaker.call(endpoint)
    assert endpoint.calls == 3
    clock.advance(0.1)
    assert breaker.state() == "half_open"


def test_half_open_allows_exactly_one_trial_at_a_time(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=1, reset_seconds=30)
    _fail(breaker, Endpoint(), 1)
    clock.advance(30)
    concurrent = Endpoint()
    refused: list[CircuitOpen] = []

    def trial() -> str:
        # While this trial runs, another caller (another process) must be refused.
        try:
            breaker.call(concurrent)
        except CircuitOpen as exc:
            refused.append(exc)
        return "trial ok"

    assert breaker.call(trial) == "trial ok"

    assert len(refused) == 1
    assert concurrent.calls == 0
    assert breaker.state() == "closed"


def test_trial_lock_is_released_after_a_failed_trial(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=1, reset_seconds=30)
    endpoint = Endpoint()
    _fail(breaker, endpoint, 1)
    clock.advance(30)
    _fail(breaker, endpoint, 1)
    clock.advance(30)
    endpoint.failing = False

    assert breaker.call(endpoint) == "ok"

    assert endpoint.calls == 3
    assert breaker.state() == "closed"


def test_answered_errors_propagate_without_counting_as_failures(clock: Clock):
    breaker = CircuitBreaker(
        "t", failure_threshold=2, reset_seconds=30, classify=classify_provider_error
    )
    calls = 0

    def rejected() -> None:
        nonlocal calls
        calls += 1
        raise ProviderRejected(status_code=401, error_type="AuthenticationError")

    for _ in range(5):
        with pytest.raises(ProviderRejected):
            breaker.call(rejected)

    assert calls == 5
    assert breaker.state() == "closed"


def test_an_answered_error_during_the_trial_closes_the_circuit(clock: Clock):
    breaker = CircuitBreaker(
        "t", failure_threshold=1, reset_seconds=30, classify=classify_provider_error
    )
    _fail(breaker, Endpoint(), 1)
    clock.advance(30)

    def rejected() -> None:
        raise ProviderRejected(status_code=403, error_type="PermissionDeniedError")

    with pytest.raises(ProviderRejected):
        breaker.call(rejected)

    assert breaker.state() == "closed"


def test_state_is_shared_by_name_through_the_cache(clock: Clock):
    first = CircuitBreaker("shared", failure_threshold=2, reset_seconds=30)
    second = CircuitBreaker("shared", failure_threshold=2, reset_seconds=30)
    other = CircuitBreaker("other", failure_threshold=2, reset_seconds=30)

    _fail(first, Endpoint(), 2)

    assert second.state() == "open"
    assert other.state() == "closed"


def test_reset_closes_the_circuit(clock: Clock):
    breaker = CircuitBreaker("t", failure_threshold=1, reset_seconds=30)
    _fail(breaker, Endpoint(), 1)

    breaker.reset()

    assert breaker.state() == "closed"
    assert breaker.call(Endpoint()) == "ok"


def test_defaults_come_from_settings(settings):
    settings.PROVIDER_BREAKER_FAILURE_THRESHOLD = 7
    settings.PROVIDER_BREAKER_RESET_SECONDS = 11

    breaker = CircuitBreaker("t")

    assert breaker.failure_threshold == 7
    assert breaker.reset_seconds == 11


def test_clock_can_be_passed_in():
    now = Clock(now=500.0)
    breaker = CircuitBreaker("t", failure_threshold=1, reset_seconds=10, clock=now)
    _fail(breaker, Endpoint(), 1)

    now.advance(10)

    assert breaker.state() == "half_open"


@pytest.mark.parametrize(
    ("_case", "error", "verdict"),
    [
        ("connection_refused", ConnectionRefusedError("refused"), "fault"),
        ("timeout", TimeoutError("slow"), "fault"),
        ("rate_limited", ProviderRejected(status_code=429, error_type="RateLimitError"), "fault"),
        (
            "request_timeout",
            ProviderRejected(status_code=408, error_type="APIStatusError"),
            "fault",
        ),
        (
            "bad_key",
            ProviderRejected(status_code=401, error_type="AuthenticationError"),
            "answered",
        ),
        ("lone_surrogate", UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogate"), "neutral"),
        ("bad_argument", ValueError("bad input"), "neutral"),
        ("type_error", TypeError("not a str"), "neutral"),
    ],
)
def test_only_provider_faults_are_faults(_case, error, verdict):
    assert classify_provider_error(error) == verdict


def test_the_callers_own_errors_never_open_the_circuit(clock: Clock):
    breaker = CircuitBreaker(
        "t", failure_threshold=2, reset_seconds=30, classify=classify_provider_error
    )

    def bad_input() -> None:
        "\ud800".encode()

    for _ in range(6):
        with pytest.raises(UnicodeEncodeError):
            breaker.call(bad_input)

    assert breaker.state() == "closed"


def test_a_neutral_error_during_the_trial_leaves_the_circuit_half_open(clock: Clock):
    breaker = CircuitBreaker(
        "t", failure_threshold=1, reset_seconds=30, classify=classify_provider_error
    )
    _fail(breaker, Endpoint(), 1)
    clock.advance(30)

    def bad_input() -> None:
        raise ValueError("the caller's input")

    with pytest.raises(ValueError, match="the caller's input"):
        breaker.call(bad_input)

    assert breaker.state() == "half_open"
    assert breaker.call(Endpoint()) == "ok"
    assert breaker.state() == "closed"
