"""The shared cache (Redis under ``REDIS_URL``), with this process's memory standing in while
Redis cannot be reached.

What the cache holds is coordination, not data: rate-limit windows, in-flight and heavy-read
slots, the provider breaker's state, the API-key change token, short-lived read caches. Losing
Redis must not fail the requests that only count against those (Django's ``RedisCache`` raises
``ConnectionError`` into every one of them, which answered 500). So every operation that cannot
reach Redis runs on a per-process ``LocMemCache`` instead, as it would in a deployment without
``REDIS_URL``, and for ``RETRY_SECONDS`` after a failure the process does not try Redis again,
so an outage does not add a connection attempt to every cache call. Limits then count per
process (:func:`shared_cache_reachable` lets the in-flight cap fall back to a process's share),
and a key change made meanwhile reaches other hosts within ``API_KEY_CACHE_SECONDS``
(apps/tenancy/key_revocations.py). When Redis answers again, its counts take over; nothing
is copied between the two (a slot taken in Redis and released during the outage stays counted
there until its TTL).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import ConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from typing_extensions import override

from apps.core.telemetry import emit

logger = logging.getLogger(__name__)

#: After Redis failed, how long this process uses its own memory before trying Redis again.
RETRY_SECONDS = 1.0
_UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
# Django builds a cache backend per thread; the stand-in store and the failure window are the
# process's (a LocMemCache's store is shared by name).
STAND_IN_NAME = "engram-shared-cache-stand-in"
_state_lock = threading.Lock()
_T = TypeVar("_T")
_last_failure = float("-inf")


def standing_in() -> bool:
    """Whether this process is counting in its own memory because Redis failed just now."""
    return time.monotonic() < _last_failure + RETRY_SECONDS


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's Redis client, keeping one ``redis.Redis`` per connection pool. Django builds a
    new one for every operation, and redis-py's constructor copies its ~170 response callbacks
    into a case-insensitive dict: ~0.3 ms of CPU, more than the round trip it wraps, paid
    some seven times by every recall (its rate limit, in-flight and heavy-read slots).
    A ``redis.Redis`` is safe to share between threads (it takes a connection from the pool
    per command)."""

    # Django's own members, which its type stubs leave out (annotations only).
    _get_connection_pool: Callable[[bool], ConnectionPool]
    _client: Callable[..., Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    @override
    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            # The pool lives as long as this object (Django keeps it in ``_pools``): its id
            # names it for as long as the entry exists.
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class FailoverRedisCache(RedisCache):
    """``RedisCache`` whose operations fall back to a process-local cache while Redis is
    unreachable (see the module docstring)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        self._local = LocMemCache(STAND_IN_NAME, {"TIMEOUT": params.get("TIMEOUT", 300)})

    def _run(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        return self._on_redis(
            lambda: getattr(RedisCache, operation)(self, *args, **kwargs),
            lambda: getattr(self._local, operation)(*args, **kwargs),
        )

    @override
    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("add", *args, **kwargs)

    @override
    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("get", *args, **kwargs)

    @override
    def set(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("set", *args, **kwargs)

    @override
    def touch(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("touch", *args, **kwargs)

    @override
    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("delete", *args, **kwargs)

    @override
    def get_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("get_many", *args, **kwargs)

    @override
    def has_key(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("has_key", *args, **kwargs)

    @override
    def incr(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("incr", *args, **kwargs)

    @override
    def set_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("set_many", *args, **kwargs)

    @override
    def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("delete_many", *args, **kwargs)

    @override
    def clear(self) -> Any:
        return self._run("clear")

    def count(self, key: str, delta: int, *, timeout: int) -> int:
        """:func:`count` in one round trip: SET NX EX and INCRBY in one MULTI."""

        def on_redis() -> int:
            made = self.make_and_validate_key(key)
            pipeline = self._cache.get_client(made, write=True).pipeline(transaction=True)
            pipeline.set(made, 0, nx=True, ex=timeout)
            pipeline.incrby(made, delta)
            return int(pipeline.execute()[1])

        return self._on_redis(on_redis, lambda: _count_in(self._local, key, delta, timeout=timeout))

    def take_slots(self, slots: Sequence[Slot]) -> FullSlot | None:
        """:func:`take_slots` in one round trip (a script Redis runs atomically)."""

        def on_redis() -> FullSlot | None:
            keys = [self.make_and_validate_key(slot.key) for slot in slots]
            terms = [term for slot in slots for term in (slot.limit, slot.amount, slot.timeout)]
            client = self._cache.get_client(keys[0], write=True)
            position, held = client.eval(_TAKE_SLOTS, len(keys), *keys, *terms)
            return None if int(position) == 0 else FullSlot(int(position) - 1, int(held))

        return self._on_redis(on_redis, lambda: _take_slots_in(self._local, slots))

    def give_back_slots(self, slots: Sequence[Slot]) -> None:
        """:func:`give_back_slots` in one round trip."""

        def on_redis() -> None:
            keys = [self.make_and_validate_key(slot.key) for slot in slots]
            terms = [term for slot in slots for term in (slot.amount, slot.timeout)]
            client = self._cache.get_client(keys[0], write=True)
            client.eval(_GIVE_BACK_SLOTS, len(keys), *keys, *terms)

        self._on_redis(on_redis, lambda: _give_back_slots_in(self._local, slots))

    def _on_redis(self, operation: Callable[[], _T], stand_in: Callable[[], _T]) -> _T:
        """``operation`` on Redis, or ``stand_in`` on this process's memory while Redis is out
        of reach (see the module docstring)."""
        if not standing_in():
            try:
                return operation()
            except _UNREACHABLE as exc:
                _fail_over(exc)
        return stand_in()


# Redis runs a script atomically. KEYS: the counters, in the order they are taken. ARGV, three
# per key: KEYS[i]'s limit, the amount taken of it and how long a counter started here lives.
# A counter that expired meanwhile starts again at 0, and a give-back never leaves one below 0
# (it would admit more than its cap).
_TAKE_SLOTS = """
for i, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'NX', 'EX', ARGV[3 * i])
  local held = redis.call('INCRBY', key, ARGV[3 * i - 1])
  if held > tonumber(ARGV[3 * i - 2]) then
    for j = i, 1, -1 do
      if redis.call('DECRBY', KEYS[j], ARGV[3 * j - 1]) < 0 then
        redis.call('SET', KEYS[j], 0, 'EX', ARGV[3 * j])
      end
    end
    return {i, held}
  end
end
return {0, 0}
"""
# ARGV, two per key: the amount given back and the counter's lifetime.
_GIVE_BACK_SLOTS = """
for i, key in ipairs(KEYS) do
  if redis.call('DECRBY', key, ARGV[2 * i - 1]) < 0 then
    redis.call('SET', key, 0, 'EX', ARGV[2 * i])
  end
end
return 0
"""


@dataclass(frozen=True)
class Slot:
    """``amount`` of the counter ``key``, which may hold at most ``limit``: a slot of a
    counting semaphore (in-flight requests, heavy reads), or a request's hits in a rate-limit
    window. A counter lives ``timeout`` seconds from when it starts."""

    key: str
    limit: int
    timeout: int
    amount: int = 1


@dataclass(frozen=True)
class FullSlot:
    """The slot :func:`take_slots` could not take: its position and the count it reached."""

    position: int
    held: int


def take_slots(slots: Sequence[Slot]) -> FullSlot | None:
    """Take each slot in order: every one, or none.

    At the first whose counter would pass its limit, the ones taken are given back and that
    one is returned; None means all are held (give back the ones that are held for the
    request's length, such as in-flight slots, with :func:`give_back_slots`; a rate window's
    hits stay counted). On Redis this is one round trip, where counting each slot and giving
    back a refusal's would cost one each; a slot past its limit never holds the ones after it,
    even for a moment."""
    if not slots:
        return None
    if isinstance(cache_backend := caches["default"], FailoverRedisCache):
        return cache_backend.take_slots(slots)
    return _take_slots_in(cache_backend, slots)


def give_back_slots(slots: Sequence[Slot]) -> None:
    """Give back what :func:`take_slots` took of each slot (one round trip on Redis)."""
    if not slots:
        return
    if isinstance(cache_backend := caches["default"], FailoverRedisCache):
        cache_backend.give_back_slots(slots)
        return
    _give_back_slots_in(cache_backend, slots)


def _take_slots_in(backend: BaseCache, slots: Sequence[Slot]) -> FullSlot | None:
    for position, slot in enumerate(slots):
        held = _count_in(backend, slot.key, slot.amount, timeout=slot.timeout)
        if held > slot.limit:
            _give_back_slots_in(backend, slots[: position + 1])
            return FullSlot(position, held)
    return None


def _give_back_slots_in(backend: BaseCache, slots: Sequence[Slot]) -> None:
    for slot in slots:
        _release_in(backend, slot.key, slot.amount, timeout=slot.timeout)


def count(key: str, delta: int, *, timeout: int) -> int:
    """Add ``delta`` to the counter ``key`` and return its new value; a missing (or expired)
    counter starts at 0 and lives ``timeout`` seconds from then.

    For counts that refuse nothing (a failed authentication); what has a limit is taken with
    :func:`take_slots`. Django's ``add`` then ``incr`` costs Redis three round trips (``incr``
    checks the key exists first), and each round trip gives up the GIL, which a busy process
    takes milliseconds to hand back: on Redis this is one."""
    if isinstance(cache_backend := caches["default"], FailoverRedisCache):
        return cache_backend.count(key, delta, timeout=timeout)
    return _count_in(cache_backend, key, delta, timeout=timeout)


def _release_in(backend: BaseCache, key: str, amount: int, *, timeout: int) -> None:
    # A counter that expired meanwhile starts again at 0, never below: below zero it would
    # admit more than its cap.
    if _count_in(backend, key, -amount, timeout=timeout) < 0:
        backend.set(key, 0, timeout=timeout)


def _count_in(backend: BaseCache, key: str, delta: int, *, timeout: int) -> int:
    backend.add(key, 0, timeout=timeout)
    try:
        return int(backend.incr(key, delta))
    except ValueError:  # the key expired between add and incr
        backend.add(key, delta, timeout=timeout)
        return delta


def _fail_over(exc: Exception) -> None:
    global _last_failure
    now = time.monotonic()
    with _state_lock:
        # Within an outage the retries fail about every RETRY_SECONDS: say so once.
        outage_starts = now - _last_failure > 3 * RETRY_SECONDS
        _last_failure = now
    emit("cache.unreachable", {"count": 1}, {"error": type(exc).__name__})
    if outage_starts:
        logger.warning("the shared cache is unreachable; using process memory: %s", exc)


def shared_cache_reachable() -> bool:
    """Whether counts in the cache are shared by every process: a shared cache is configured
    (``REDIS_URL``) and this process is not standing in for it."""
    return bool(settings.REDIS_URL) and not standing_in()
