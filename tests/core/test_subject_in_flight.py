"""The per-subject in-flight cap: the request past it is 429 `too_many_requests_in_flight` with
Retry-After, before any work (no row, no rate-limit hit), and only for that subject; slots are
given back when a request ends, however it ends. Counted in Redis, concurrent holders across
connections get exactly the cap."""

import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from django.core.cache import caches

from apps.core.in_flight import (
    TooManyRequestsInFlight,
    subject_in_flight_limit,
    subject_in_flight_slot,
)
from apps.memory.models import Memory
from tests.redis_server import private_redis

CAP = 4


def _hold(stack: ExitStack, *, tenant_id: object, subject_id: str, count: int) -> None:
    for _ in range(count):
        stack.enter_context(subject_in_flight_slot(tenant_id=tenant_id, subject_id=subject_id))


def test_the_request_at_the_cap_is_served_and_the_one_past_it_refused(
    settings, agent, other_agent, foreign_agent, tenant
):
    settings.SUBJECT_MAX_IN_FLIGHT = CAP
    with ExitStack() as held:
        _hold(held, tenant_id=tenant.pk, subject_id="agent-a", count=CAP - 1)
        served = agent.post("/api/v1/memory", {"text": "the fourth request in flight"})
        assert served.status_code == 201

        _hold(held, tenant_id=tenant.pk, subject_id="agent-a", count=1)
        refused = agent.post("/api/v1/memory", {"text": "the fifth request in flight"})
        assert refused.status_code == 429
        assert refused["Retry-After"] == "1"
        assert refused.json()["error"]["code"] == "too_many_requests_in_flight"
        assert refused.json()["error"]["details"] == {
            "retry_after_seconds": 1,
            "max_in_flight": CAP,
        }
        assert list(Memory.objects.values_list("text", flat=True)) == [
            "the fourth request in flight"
        ]

        # Another agent of the tenant, and the same agent id in another tenant, are not held.
        assert other_agent.post("/api/v1/memory", {"text": "quiet"}).status_code == 201
        assert foreign_agent.post("/api/v1/memory", {"text": "elsewhere"}).status_code == 201
    assert agent.post("/api/v1/memory", {"text": "after the others ended"}).status_code == 201


def test_a_refused_request_is_not_charged_to_its_rate_limit(settings, agent, tenant):
    settings.SUBJECT_MAX_IN_FLIGHT = 1
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    with ExitStack() as held:
        _hold(held, tenant_id=tenant.pk, subject_id="agent-a", count=1)
        refused = agent.post("/api/v1/memory", {"text": "refused"})
        assert refused.json()["error"]["code"] == "too_many_requests_in_flight"
    # The bucket's one write is still there to take.
    assert agent.post("/api/v1/memory", {"text": "served"}).status_code == 201
    assert agent.post("/api/v1/memory", {"text": "limited"}).json()["error"]["code"] == (
        "rate_limited"
    )


def test_every_request_gives_its_slot_back_however_it_ends(settings, agent):
    settings.SUBJECT_MAX_IN_FLIGHT = 1
    outcomes = [
        agent.post("/api/v1/memory", {"text": "served"}).status_code,
        agent.post("/api/v1/memory", {"text": ""}).status_code,  # invalid
        agent.get("/api/v1/memory/00000000-0000-0000-0000-000000000000").status_code,
        agent.post("/api/v1/memory/recall", {"query": "served"}).status_code,
        agent.post("/api/v1/memory", {"text": "served again"}).status_code,
    ]
    assert outcomes == [201, 422, 404, 200, 201]


@pytest.mark.parametrize(
    ("_case", "redis_url", "processes", "expected"),
    [
        ("shared cache: the whole cap", "redis://cache:6379/0", 2, 4),
        ("one process: the whole cap", "", 1, 4),
        ("two processes: half each", "", 2, 2),
        ("three processes: rounded up", "", 3, 2),
        ("more processes than the cap: one each", "", 8, 1),
    ],
)
def test_without_a_shared_cache_each_process_holds_its_share(
    settings, _case, redis_url, processes, expected
):
    settings.SUBJECT_MAX_IN_FLIGHT = CAP
    settings.REDIS_URL = redis_url
    settings.WEB_PROCESSES = processes
    assert subject_in_flight_limit() == expected
    with ExitStack() as held:
        _hold(held, tenant_id="t", subject_id="a", count=expected)
        with (
            pytest.raises(TooManyRequestsInFlight),
            subject_in_flight_slot(tenant_id="t", subject_id="a"),
        ):
            pass


# ----------------------------------------------------------------------------- real Redis


@pytest.fixture
def redis_cache(settings) -> Iterator[None]:
    with private_redis() as server:
        settings.REDIS_URL = server.url
        settings.CACHES = {
            "default": {"BACKEND": "apps.core.cache.FailoverRedisCache", "LOCATION": server.url}
        }
        try:
            yield
        finally:
            caches.close_all()


HOLDERS = 12


@pytest.mark.usefixtures("redis_cache")
def test_concurrent_requests_of_one_subject_get_exactly_the_cap_across_connections(settings):
    settings.SUBJECT_MAX_IN_FLIGHT = CAP
    start = threading.Barrier(HOLDERS)
    attempted = threading.Barrier(HOLDERS)
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def request(index: int) -> None:
        # Each thread has its own cache connection: as many connections as web processes.
        subject = "quiet" if index % 4 == 0 else "noisy"
        start.wait()
        try:
            with subject_in_flight_slot(tenant_id="t", subject_id=subject):
                result = "served"
                attempted.wait()  # every request tries while the served ones hold their slot
        except TooManyRequestsInFlight:
            result = "refused"
            attempted.wait()
        with lock:
            outcomes.append((subject, result))

    threads = [threading.Thread(target=request, args=(index,)) for index in range(HOLDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count(("quiet", "served")) == 3
    assert outcomes.count(("noisy", "served")) == CAP
    assert outcomes.count(("noisy", "refused")) == 9 - CAP
    # Every slot was given back.
    with ExitStack() as held:
        _hold(held, tenant_id="t", subject_id="noisy", count=CAP)


def test_each_gunicorn_worker_learns_how_many_web_processes_there_are(monkeypatch):
    from types import SimpleNamespace

    from config import gunicorn

    monkeypatch.setenv("ENGRAM_WEB_PROCESSES", "1")
    gunicorn.post_fork(SimpleNamespace(cfg=SimpleNamespace(workers=3)), worker=None)

    assert os.environ["ENGRAM_WEB_PROCESSES"] == "3"


def test_a_slot_held_across_its_keys_expiry_does_not_leave_the_count_below_zero(settings):
    settings.SUBJECT_MAX_IN_FLIGHT = 2
    settings.REDIS_URL = "redis://cache:6379/0"  # the whole cap in this process
    with ExitStack() as old:
        _hold(old, tenant_id="t", subject_id="expiring", count=1)
        caches["default"].clear()  # the slot key expires while the request runs
        with ExitStack() as new:
            _hold(new, tenant_id="t", subject_id="expiring", count=1)
    # Both released: the cap is whole again, and no more than whole.
    with ExitStack() as held:
        _hold(held, tenant_id="t", subject_id="expiring", count=2)
        with (
            pytest.raises(TooManyRequestsInFlight),
            subject_in_flight_slot(tenant_id="t", subject_id="expiring"),
        ):
            pass
