"""A web process's fair share among subjects: while other subjects are active, one subject runs
at most its share of the process's cores at a time and its next request waits, blocked, for
one of its own to end (or is refused after the wait); alone, it is not bounded here at all."""

import threading
from contextlib import ExitStack

import pytest

from apps.core.fair_share import FairShareGate, subject_fair_share_turn
from apps.core.in_flight import TooManyRequestsInFlight
from apps.memory.models import Memory

WINDOW = 2.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _turn(gate: FairShareGate, subject: str, *, cores: int = 1, wait: float = 5.0):
    return gate.turn(subject, cores=cores, active_window_seconds=WINDOW, wait_seconds=wait)


def test_a_subject_alone_runs_as_many_requests_as_it_sends():
    gate = FairShareGate()
    with ExitStack() as held:
        for _ in range(6):
            held.enter_context(_turn(gate, "a", wait=0))
        assert gate.share(cores=1, active_window_seconds=WINDOW) is None


def test_beside_another_active_subject_the_next_request_waits_for_its_own_to_end():
    gate = FairShareGate()
    with _turn(gate, "quiet"):
        pass  # "quiet" was just served: two subjects are active
    order: list[str] = []
    first_running = threading.Event()
    release_first = threading.Event()

    def first() -> None:
        with _turn(gate, "noisy"):
            first_running.set()
            release_first.wait(5)
            order.append("first ends")

    def second() -> None:
        first_running.wait(5)
        with _turn(gate, "noisy"):
            order.append("second runs")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_running.wait(5)
    # The second has had time to start, and is still waiting for its turn.
    threads[1].join(timeout=0.3)
    assert threads[1].is_alive()
    assert order == []
    # Another subject is not held back by "noisy" at all.
    with _turn(gate, "quiet", wait=0):
        pass
    release_first.set()
    for thread in threads:
        thread.join(timeout=5)
    assert order == ["first ends", "second runs"]


def test_the_share_is_the_cores_over_the_active_subjects_and_at_least_one():
    gate = FairShareGate()
    for subject in ("a", "b"):
        with _turn(gate, subject):
            pass
    assert gate.share(cores=4, active_window_seconds=WINDOW) == 2
    assert gate.share(cores=1, active_window_seconds=WINDOW) == 1
    with _turn(gate, "c"):
        pass
    assert gate.share(cores=4, active_window_seconds=WINDOW) == 1
    with ExitStack() as held:
        held.enter_context(_turn(gate, "a", cores=4))
        with pytest.raises(TooManyRequestsInFlight), _turn(gate, "a", cores=4, wait=0):
            pass


def test_a_request_that_waits_past_its_deadline_is_refused_and_holds_nothing():
    gate = FairShareGate()
    with _turn(gate, "quiet"):
        pass
    with _turn(gate, "noisy"):
        with pytest.raises(TooManyRequestsInFlight) as refused, _turn(gate, "noisy", wait=0.05):
            pass
        assert refused.value.details == {"retry_after_seconds": 1, "max_in_flight": 1}
    # Nothing was left running: "noisy" runs again at once.
    with _turn(gate, "noisy", wait=0):
        pass


def test_a_subject_alone_again_once_the_others_fall_quiet_runs_unbounded():
    clock = Clock()
    gate = FairShareGate(clock=clock)
    with _turn(gate, "quiet"):
        pass
    with ExitStack() as held:
        held.enter_context(_turn(gate, "noisy"))
        with pytest.raises(TooManyRequestsInFlight), _turn(gate, "noisy", wait=0):
            pass
        clock.now += WINDOW + 0.1
        held.enter_context(_turn(gate, "noisy", wait=0))


def test_over_the_api_the_refusal_comes_before_any_work(settings, agent, other_agent, tenant):
    settings.SUBJECT_FAIR_SHARE_WAIT_SECONDS = 0.05
    # One core per process, whatever this machine has.
    settings.WEB_PROCESSES = 10_000
    assert other_agent.post("/api/v1/memory", {"text": "the quiet agent"}).status_code == 201
    with subject_fair_share_turn(tenant_id=tenant.pk, subject_id="agent-a"):
        refused = agent.post("/api/v1/memory", {"text": "waits, then refused"})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "too_many_requests_in_flight"
    assert refused["Retry-After"] == "1"
    assert not Memory.objects.filter(text="waits, then refused").exists()
    assert agent.post("/api/v1/memory", {"text": "its turn now"}).status_code == 201


def test_off_the_gate_never_holds_a_request(settings, agent, other_agent, tenant):
    settings.SUBJECT_FAIR_SHARE_WAIT_SECONDS = 0.05
    settings.WEB_PROCESSES = 10_000
    assert other_agent.post("/api/v1/memory", {"text": "the quiet agent"}).status_code == 201
    with subject_fair_share_turn(tenant_id=tenant.pk, subject_id="agent-a"):
        settings.SUBJECT_FAIR_SHARE = False
        assert agent.post("/api/v1/memory", {"text": "not held"}).status_code == 201
