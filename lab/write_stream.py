"""``memory_bench --write-stream``: how long after a write returns is the memory searchable?

Measured the way a client lives it, against a running server on this machine (``make run``:
gunicorn, a real Celery worker on its broker, the tenant's embedder) and the database it uses:

* **stream** — ``count`` single ``POST /api/v1/memory`` writes at ``rate`` per second, each
  sent on its schedule (an open loop: a few sender threads, so a slow write does not delay the
  next one). Each text carries a word of its own, and a checker thread asks keyword recall for
  that word as soon as the write has returned, again every ``POLL_S`` until the memory is in
  the answer: *write → keyword-findable*. *Write → embedded* is the row's ``embedded_at``
  (stamped by the worker in the same UPDATE as the vector, so the first moment a semantic
  recall can rank it) minus the moment the write returned, both on this machine's clock; at
  the end every memory is looked up by semantic recall of its own text, to check that
  embedded means found.
* **burst** — ``count`` single writes as fast as the client can send them (each waits for the
  previous one's response): whether keyword recall finds the last one right after its write
  returned, and the seconds from that moment until all of them are embedded.

A throwaway tenant is created and deleted at the end. Its agents write at most
``WRITES_PER_SUBJECT`` memories each (write ``i`` belongs to agent ``i // WRITES_PER_SUBJECT``
of its phase), so the per-subject write rate limit is not what is measured: a stream of 100
writes/s stands for many agents writing at once.
"""

from __future__ import annotations

import itertools
import json
import math
import queue
import secrets
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from apps.core.exceptions import CoreErrorCode
from apps.memory.models import Memory
from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create, tenant_create
from lab.flood_bench import outcome_label
from lab.http_client import KeepAliveClient
from lab.load_bench import require_loopback

POLL_S = 0.02
# The stream's senders and keyword checkers: enough threads that one request may take this
# long without the schedule slipping, at most this many of each. The stream is meant to be an
# open loop, so its senders must outlast the server's slowest answers: with 25 senders (0.25 s
# each at 100 writes/s) a loaded server's pauses made writes leave up to 0.37 s late and the
# stream sent 89/s; ``late_ms_p99`` in the report says whether the schedule held.
REQUEST_BUDGET_S = 1.0
MAX_STREAM_THREADS = 128
#: Give up on a memory that is not searchable after this long (reported as not found).
SEARCHABLE_TIMEOUT_S = 120.0
#: Writes per agent: under the default per-subject limit (600 a minute) however fast they go.
WRITES_PER_SUBJECT = 250
#: How long a refused request waits before it is sent again (the server's ``Retry-After`` is an
#: upper bound; a request in flight usually ends well within it).
IN_FLIGHT_RETRY_S = 0.1
IN_FLIGHT_REFUSAL = f"429 {CoreErrorCode.TOO_MANY_REQUESTS_IN_FLIGHT}"
WORDS = ("kettle", "harbour", "violin", "meadow", "lantern", "orchard", "glacier", "saddle")


def _token() -> str:
    # A word no other memory has: keyword recall for it finds exactly this memory.
    return "zq" + secrets.token_hex(5)


def _text(token: str, index: int) -> str:
    return f"Note {index}: the {WORDS[index % len(WORDS)]} is filed under {token} today."


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


@dataclass
class Write:
    token: str
    text: str
    subject: int  # which of the phase's agents wrote it
    memory_id: str = ""
    #: How late the write left against its slot in the schedule (0 for the burst).
    late_s: float = 0.0
    sent_at: float = 0.0  # time.time() when the request left
    returned_at: float = 0.0  # time.time() when the response arrived
    keyword_found_at: float | None = None
    keyword_first_try: bool = False


@dataclass
class Phase:
    writes: list[Write] = field(default_factory=list)
    started_at: float = 0.0
    finished_at: float = 0.0
    #: Writes the server refused for the agent's requests in flight, and the client sent again.
    refused_in_flight: int = 0


class _Client:
    def __init__(self, url: str, key: str) -> None:
        self.http = KeepAliveClient(f"{url.rstrip('/')}/api/v1", token=key)
        #: Requests the server refused because the agent had too many in flight (each retried).
        self.refused_in_flight = 0

    def write(self, text: str) -> str:
        return str(self._post("/memory", {"text": text})["data"]["id"])

    def recall(self, query: str, mode: str, limit: int = 10) -> list[dict[str, Any]]:
        body = {"query": query, "mode": mode, "limit": limit}
        return list(self._post("/memory/recall", body)["data"])

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        """The parsed answer, retried as a client would when the server refuses the agent for
        having too many requests in flight (a slow server keeps an agent's writes, and its
        checker's recalls, in flight together); any other non-2xx raises ``RuntimeError``."""
        deadline = time.monotonic() + SEARCHABLE_TIMEOUT_S
        while True:
            status, payload = self.http.post_response(path, body)
            if status.startswith("2"):
                return json.loads(payload)
            if outcome_label(status, payload) != IN_FLIGHT_REFUSAL:
                raise RuntimeError(f"POST {path} answered {status}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"POST {path} refused in flight for {SEARCHABLE_TIMEOUT_S} s")
            self.refused_in_flight += 1
            time.sleep(IN_FLIGHT_RETRY_S)

    def found(self, write: Write, mode: str = "keyword") -> bool:
        query = write.token if mode == "keyword" else write.text
        hits = self.recall(query, mode, limit=1 if mode == "semantic" else 10)
        return any(hit["memory"]["id"] == write.memory_id for hit in hits)

    def close(self) -> None:
        self.http.close()


class _Agents:
    """One thread's connections, one per agent key of the phase (opened on first use)."""

    def __init__(self, url: str, keys: list[str]) -> None:
        self.url, self.keys = url, keys
        self.clients: dict[int, _Client] = {}

    def of(self, subject: int) -> _Client:
        if subject not in self.clients:
            self.clients[subject] = _Client(self.url, self.keys[subject])
        return self.clients[subject]

    def refused_in_flight(self) -> int:
        return sum(client.refused_in_flight for client in self.clients.values())

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def _new_write(index: int, *, late_s: float = 0.0) -> Write:
    token = _token()
    return Write(
        token=token,
        text=_text(token, index),
        subject=index // WRITES_PER_SUBJECT,
        late_s=late_s,
    )


def _keyword_checker(agents: _Agents, pending: queue.Queue[Write | None]) -> None:
    """Poll keyword recall for each write, in the order they returned, until it is found."""
    while (write := pending.get()) is not None:
        first = True
        while time.time() - write.returned_at < SEARCHABLE_TIMEOUT_S:
            if agents.of(write.subject).found(write):
                write.keyword_found_at = time.time()
                write.keyword_first_try = first
                break
            first = False
            time.sleep(POLL_S)


def _stream(url: str, keys: list[str], *, rate: float, count: int, check_every: int = 1) -> Phase:
    """Write ``i`` is sent at ``start + i / rate``, whatever the previous writes' latency: an
    open-loop schedule, kept by a few sender threads (one connection each), so the rate asked
    is the rate sent for as long as the server keeps up; past that, writes go late and
    ``rate_achieved`` says so. Every ``check_every``-th returned write is handed to the keyword
    checkers (their recalls share the server with the writes they measure)."""
    pending: queue.Queue[Write | None] = queue.Queue()
    checkers = [
        threading.Thread(target=_keyword_checker, args=(_Agents(url, keys), pending), daemon=True)
        for _ in range(_threads_for(rate / check_every))
    ]
    for thread in checkers:
        thread.start()
    writes: list[Write | None] = [None] * count
    tickets = itertools.count()
    ticket_lock = threading.Lock()
    start = time.monotonic() + 0.1
    interval = 1.0 / rate
    refusals: list[int] = []

    def send() -> None:
        agents = _Agents(url, keys)
        try:
            while True:
                with ticket_lock:
                    index = next(tickets)
                if index >= count:
                    return
                delay = start + index * interval - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                write = _new_write(index, late_s=max(0.0, -delay))
                write.sent_at = time.time()
                write.memory_id = agents.of(write.subject).write(write.text)
                write.returned_at = time.time()
                writes[index] = write
                if index % check_every == 0:
                    pending.put(write)
        finally:
            refusals.append(agents.refused_in_flight())
            agents.close()

    senders = [threading.Thread(target=send) for _ in range(_threads_for(rate))]
    phase = Phase(started_at=time.time() + 0.1)
    try:
        for thread in senders:
            thread.start()
        for thread in senders:
            thread.join()
        phase.finished_at = time.time()
        phase.refused_in_flight = sum(refusals)
    finally:
        for _ in checkers:
            pending.put(None)
        for thread in checkers:
            thread.join(timeout=SEARCHABLE_TIMEOUT_S + 10)
    phase.writes = [write for write in writes if write is not None]
    return phase


def _threads_for(rate: float) -> int:
    """Enough senders (and checkers) that each has ``REQUEST_BUDGET_S`` per request at
    ``rate``."""
    return max(1, min(MAX_STREAM_THREADS, math.ceil(rate * REQUEST_BUDGET_S)))


def _burst(url: str, keys: list[str], *, count: int) -> tuple[Phase, bool]:
    agents = _Agents(url, keys)
    phase = Phase(started_at=time.time())
    try:
        for index in range(count):
            write = _new_write(index)
            write.sent_at = time.time()
            write.memory_id = agents.of(write.subject).write(write.text)
            write.returned_at = time.time()
            phase.writes.append(write)
        phase.finished_at = time.time()
        last = phase.writes[-1]
        phase.refused_in_flight = agents.refused_in_flight()
        last_found = agents.of(last.subject).found(last)
    finally:
        agents.close()
    return phase, last_found


def _wait_embedded(ids: list[str], *, since: float) -> dict[str, float]:
    """``embedded_at`` per memory, waiting until all are embedded (or the timeout)."""
    while True:
        stamps = dict(
            Memory.objects.filter(pk__in=ids, embedded_at__isnull=False).values_list(
                "pk", "embedded_at"
            )
        )
        if len(stamps) == len(ids) or time.time() - since > SEARCHABLE_TIMEOUT_S:
            return {str(pk): stamp.timestamp() for pk, stamp in stamps.items() if stamp}
        time.sleep(POLL_S)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def run(*, url: str, rate: float, count: int, check_every: int = 1) -> dict[str, Any]:
    url = require_loopback(url)
    tenant = tenant_create(slug=f"bench-stream-{secrets.token_hex(4)}", name="write-stream bench")
    try:
        stream_keys = _agent_keys(tenant, "stream", count=count)
        burst_keys = _agent_keys(tenant, "burst", count=count)

        stream = _stream(url, stream_keys, rate=rate, count=count, check_every=check_every)
        stream_ids = [write.memory_id for write in stream.writes]
        embedded = _wait_embedded(stream_ids, since=stream.finished_at)
        keyword_s = [
            write.keyword_found_at - write.returned_at
            for write in stream.writes
            if write.keyword_found_at is not None
        ]
        embed_s = [
            embedded[write.memory_id] - write.returned_at
            for write in stream.writes
            if write.memory_id in embedded
        ]
        # The same, counted from when the client sent the write: its answer's wait included.
        embed_from_sent_s = [
            embedded[write.memory_id] - write.sent_at
            for write in stream.writes
            if write.memory_id in embedded
        ]
        checker = _Agents(url, stream_keys)
        try:
            semantic_found = sum(
                checker.of(write.subject).found(write, "semantic") for write in stream.writes
            )
        finally:
            checker.close()

        burst, last_found = _burst(url, burst_keys, count=count)
        burst_ids = [write.memory_id for write in burst.writes]
        burst_embedded = _wait_embedded(burst_ids, since=burst.finished_at)
        last_returned = burst.writes[-1].returned_at
        all_embedded_s = (
            max(burst_embedded.values()) - last_returned
            if len(burst_embedded) == len(burst_ids)
            else None
        )
        elapsed = stream.finished_at - stream.started_at
        sent = sorted(write.sent_at for write in stream.writes)
        sending = sent[-1] - sent[0] if len(sent) > 1 else 0.0
        late_s = [write.late_s for write in stream.writes]
        answer_s = [write.returned_at - write.sent_at for write in stream.writes]
        return {
            "url": url,
            "stream": {
                "rate_requested": rate,
                "writes": len(stream.writes),
                "refused_in_flight": stream.refused_in_flight,
                "agents": len(stream_keys),
                # Writes sent per second, first send to last: the rate the server was offered.
                "rate_sent": round((len(sent) - 1) / sending, 1) if sending > 0 else None,
                "late_ms_p50": _ms(percentile(late_s, 0.5)),
                "late_ms_p99": _ms(percentile(late_s, 0.99)),
                "write_ms_p50": _ms(percentile(answer_s, 0.5)),
                "write_ms_p99": _ms(percentile(answer_s, 0.99)),
                # Writes completed per second, first send to last response: the rate it took.
                "rate_achieved": round(count / elapsed, 1) if elapsed > 0 else None,
                "keyword_checked": len(range(0, count, check_every)),
                "keyword_findable": len(keyword_s),
                "keyword_first_try": sum(write.keyword_first_try for write in stream.writes),
                "keyword_ms_p50": _ms(percentile(keyword_s, 0.5)),
                "keyword_ms_p99": _ms(percentile(keyword_s, 0.99)),
                "embedded": len(embed_s),
                "embedded_ms_p50": _ms(percentile(embed_s, 0.5)),
                "embedded_ms_p99": _ms(percentile(embed_s, 0.99)),
                "embedded_ms_max": _ms(max(embed_s) if embed_s else None),
                "embedded_from_sent_ms_p50": _ms(percentile(embed_from_sent_s, 0.5)),
                "embedded_from_sent_ms_p99": _ms(percentile(embed_from_sent_s, 0.99)),
                "semantic_found": semantic_found,
            },
            "burst": {
                "writes": len(burst.writes),
                "refused_in_flight": burst.refused_in_flight,
                "agents": len(burst_keys),
                "seconds": round(burst.finished_at - burst.started_at, 2),
                "writes_per_s": round(count / (burst.finished_at - burst.started_at), 1),
                "last_keyword_findable_on_return": last_found,
                "embedded": len(burst_embedded),
                "all_embedded_s_after_last_write": (
                    None if all_embedded_s is None else round(max(0.0, all_embedded_s), 2)
                ),
            },
        }
    finally:
        Tenant.objects.filter(pk=tenant.pk).delete()


def _agent_keys(tenant: Tenant, phase: str, *, count: int) -> list[str]:
    agents = math.ceil(count / WRITES_PER_SUBJECT)
    return [
        api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id=f"{phase}-{n}").raw_key
        for n in range(agents)
    ]


def median_of(reports: list[dict[str, Any]], phase: str, key: str) -> Any:
    values = [report[phase][key] for report in reports if report[phase][key] is not None]
    if not values or isinstance(values[0], bool):
        return values[len(values) // 2] if values else None
    return statistics.median(values)
