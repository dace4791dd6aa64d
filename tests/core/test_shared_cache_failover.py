"""The shared cache while Redis is out of reach (``apps.core.cache``): requests are served, limits
count in each process's memory, and Redis takes over again once it answers.

A private ``redis-server`` per test, stopped and started by the test, and the cache configured
as production configures it (``REDIS_URL``, ``FailoverRedisCache``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from django.core.cache import cache

from apps.core import cache as shared_cache
from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.core.in_flight import subject_in_flight_limit
from tests.redis_server import RedisServer, redis_as_the_shared_cache


@pytest.fixture
def redis_server(settings, monkeypatch) -> Iterator[RedisServer]:
    with redis_as_the_shared_cache(settings, monkeypatch) as server:
        yield server


def test_counts_go_to_redis_while_it_answers(redis_server):
    cache.add("hits", 0)
    assert cache.incr("hits") == 1

    assert redis_server.keys() == [":1:hits"]
    assert shared_cache.shared_cache_reachable()


def test_with_redis_gone_counts_go_on_in_process_memory(redis_server):
    cache.add("hits", 5)
    redis_server.stop()

    cache.add("hits", 0)
    assert cache.incr("hits") == 1  # the stand-in starts from nothing
    assert cache.incr("hits", 2) == 3
    assert cache.get("hits") == 3
    assert not shared_cache.shared_cache_reachable()


def _commands(server: RedisServer) -> dict[str, int]:
    client = redis.Redis(port=server.port)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return {name.removeprefix("cmdstat_"): int(stat["calls"]) for name, stat in stats.items()}


def test_every_operation_of_a_process_goes_through_one_redis_client(redis_server, monkeypatch):
    # Building a redis.Redis copies its response callbacks: costlier than the round trip.
    built: list[redis.Redis] = []
    build = redis.Redis.__init__

    def counting_build(self: redis.Redis, *args: object, **kwargs: object) -> None:
        built.append(self)
        build(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counting_build)
    slot = shared_cache.Slot("slots", 10, timeout=60)
    for _ in range(5):
        assert shared_cache.take_slots([slot]) is None
        shared_cache.give_back_slots([slot])
        cache.set("note", "kept")
        assert cache.get("note") == "kept"

    assert len(built) == 1
    assert redis_server.keys() == [":1:note", ":1:slots"]


def test_a_counter_is_started_and_counted_in_one_round_trip(redis_server):
    before = _commands(redis_server)

    assert shared_cache.count("slots", 1, timeout=60) == 1
    assert shared_cache.count("slots", 2, timeout=60) == 3
    assert shared_cache.count("slots", -3, timeout=60) == 0

    after = _commands(redis_server)
    # Three counts: three MULTI/EXEC blocks of SET NX EX + INCRBY, no EXISTS check.
    assert after.get("exec", 0) - before.get("exec", 0) == 3
    assert after.get("exists", 0) - before.get("exists", 0) == 0
    assert cache.get("slots") == 0  # Django's API reads what was counted
    client = redis.Redis(port=redis_server.port)
    try:
        assert 0 < client.ttl(":1:slots") <= 60
    finally:
        client.close()


def _redis_counts(server: RedisServer, *keys: str) -> list[int | None]:
    client = redis.Redis(port=server.port)
    try:
        return [None if value is None else int(value) for value in client.mget(keys)]
    finally:
        client.close()


def test_a_subjects_and_its_tenants_heavy_read_slots_cost_one_round_trip_each_way(
    redis_server, settings
):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 3
    settings.HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = 2
    before = _commands(redis_server)

    with heavy_read_slot(tenant_id="t", subject_id="noisy"):
        held = sorted(redis_server.keys())
        assert _redis_counts(redis_server, *held) == [1, 1]

    after = _commands(redis_server)
    assert after.get("eval", 0) - before.get("eval", 0) == 2  # one to take, one to give back
    assert after.get("exec", 0) - before.get("exec", 0) == 0
    assert _redis_counts(redis_server, *held) == [0, 0]


def test_heavy_read_slots_count_in_process_memory_while_redis_is_gone(redis_server, settings):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1
    redis_server.stop()

    with (
        heavy_read_slot(tenant_id="t", subject_id="a"),
        pytest.raises(HeavyReadShed),
        heavy_read_slot(tenant_id="t", subject_id="b"),
    ):
        pass
    with heavy_read_slot(tenant_id="t", subject_id="b"):
        pass


def test_a_counter_keeps_the_expiry_it_started_with(redis_server):
    shared_cache.count("window", 1, timeout=60)
    client = redis.Redis(port=redis_server.port)
    try:
        client.expire(":1:window", 5)
        shared_cache.count("window", 1, timeout=60)
        assert client.ttl(":1:window") <= 5  # a count never extends the window
    finally:
        client.close()


def test_a_slot_given_back_after_its_count_expired_leaves_zero_not_below(redis_server):
    slot = shared_cache.Slot("slots", 1, timeout=60)
    assert shared_cache.take_slots([slot]) is None
    cache.delete("slots")  # the count expires while the slot is held

    shared_cache.give_back_slots([slot])

    assert cache.get("slots") == 0
    assert shared_cache.take_slots([slot]) is None  # the one slot is free again
    assert cache.get("slots") == 1


def test_a_refused_batch_leaves_what_was_counted_before_it(redis_server):
    assert shared_cache.take_slots([shared_cache.Slot("window", 4, timeout=60, amount=2)]) is None

    refused = shared_cache.take_slots([shared_cache.Slot("window", 4, timeout=60, amount=3)])

    assert refused == shared_cache.FullSlot(position=0, held=5)
    assert cache.get("window") == 2


def test_a_request_costs_the_shared_cache_three_round_trips(redis_server, agent, settings):
    settings.RECALL_RATE_LIMIT = 5
    before = _commands(redis_server)

    assert agent.post("/api/v1/memory", {"text": "The kettle is on."}).status_code == 201

    after = _commands(redis_server)
    calls = {name: after[name] - before.get(name, 0) for name in after}
    # Authentication reads its source's failures and the key-change token in one MGET; the
    # in-flight slot and the rate-limit hit are taken by one script, the slot given back by
    # another; no MULTI block (each count used to be one).
    sent = ("get", "mget", "eval", "multi", "exec")
    assert {name: calls.get(name, 0) for name in sent} == {
        "get": 0,
        "mget": 1,
        "eval": 2,
        "multi": 0,
        "exec": 0,
    }
    held = redis_server.keys()
    in_flight = [key for key in held if "in_flight" in key]
    window = [key for key in held if "ratelimit:memory-write" in key]
    assert _redis_counts(redis_server, *in_flight, *window) == [0, 1]


def test_a_request_past_its_rate_limit_holds_no_in_flight_slot(redis_server, agent, settings):
    settings.RECALL_RATE_LIMIT = 1
    assert agent.post("/api/v1/memory/recall", {"query": "kettle"}).status_code == 200

    refused = agent.post("/api/v1/memory/recall", {"query": "kettle"})

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    held = redis_server.keys()
    in_flight = [key for key in held if "in_flight:" in key and "heavy" not in key]
    window = [key for key in held if "ratelimit:recall" in key]
    assert _redis_counts(redis_server, *in_flight, *window) == [0, 1]


def test_with_redis_gone_a_counter_counts_in_process_memory(redis_server):
    shared_cache.count("slots", 5, timeout=60)
    redis_server.stop()

    assert shared_cache.count("slots", 1, timeout=60) == 1  # the stand-in starts from nothing
    assert shared_cache.count("slots", 1, timeout=60) == 2
    assert not shared_cache.shared_cache_reachable()


def test_redis_takes_over_again_once_it_answers(redis_server):
    redis_server.stop()
    cache.set("during", 1)
    redis_server.start()
    time.sleep(shared_cache.RETRY_SECONDS + 0.1)

    cache.set("after", 1)

    assert redis_server.keys() == [":1:after"]
    assert cache.get("during") is None  # nothing is copied from the stand-in
    assert shared_cache.shared_cache_reachable()


def test_the_in_flight_cap_falls_back_to_a_process_share(redis_server, settings):
    settings.SUBJECT_MAX_IN_FLIGHT = 4
    settings.WEB_PROCESSES = 2
    assert subject_in_flight_limit() == 4

    redis_server.stop()
    cache.get("anything")  # the first call that finds Redis gone

    assert subject_in_flight_limit() == 2


def test_requests_are_served_while_redis_is_gone(redis_server, agent):
    redis_server.stop()

    written = agent.post("/api/v1/memory", {"text": "The kettle is in the left cupboard."})
    batch = agent.post("/api/v1/memory/batch", {"items": [{"text": "Tea is in the tin."}]})
    turn = agent.post(
        "/api/v1/memory/sessions/kitchen/turns",
        {"role": "user", "content": "Where is tea?", "ttl_seconds": 600},
    )
    recalled = agent.post("/api/v1/memory/recall", {"query": "Where is the kettle?"})
    listed = agent.get("/api/v1/memory")

    assert [r.status_code for r in (written, batch, turn, recalled, listed)] == [
        201,
        201,
        201,
        200,
        200,
    ]
    memory_id = written.json()["data"]["id"]
    assert memory_id in [hit["memory"]["id"] for hit in recalled.json()["data"]]


def test_rate_limits_still_refuse_while_redis_is_gone(redis_server, agent, settings):
    settings.RECALL_RATE_LIMIT = 2
    redis_server.stop()

    statuses = [
        agent.post("/api/v1/memory/recall", {"query": "kettle"}).status_code for _ in range(3)
    ]

    assert statuses == [200, 200, 429]


@pytest.mark.django_db
def test_readiness_reports_the_cache_while_redis_is_gone(redis_server, anonymous):
    assert anonymous.get("/readyz").json()["data"]["checks"]["cache"] == "ok"
    redis_server.stop()

    response = anonymous.get("/readyz")

    assert response.status_code == 503
    assert response.json()["error"]["details"]["cache"] == "error: RuntimeError"
