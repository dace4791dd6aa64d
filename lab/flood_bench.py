"""One agent floods, another of the same tenant recalls: does the quiet one notice?

The quiet agent sends a steady stream of recalls (one connection, a fixed rate, a query never
asked before each time), first alone and then while the flooder writes session turns, creates
articles, recalls, asks for knowledge context and requests promotions from several
connections at once, as fast as the server answers; a refused connection pauses for the
``Retry-After`` it was given, up to a second, as a retrying client would.
The figures are the quiet agent's latency in both phases, their ratio, and what the flooder
was refused. Like :mod:`lab.load_bench` it seeds its own tenant through the services, talks
to a loopback server over HTTP only, and removes the tenant at the end.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connections
from typing_extensions import override

from apps.core.local_stack import stop_process_group
from lab.http_client import KeepAliveClient
from lab.load_bench import (
    Agent,
    LoadBenchRefused,
    MachineTimes,
    OperationStats,
    cpu_by_role,
    machine_cpu,
    read_process_ticks,
    remove,
    require_loopback,
    seed,
    unique_query,
    wait_embedded,
)
from lab.memory_bench import distinct_topics

ROOT = Path(__file__).resolve().parents[1]
FLOOD_OPERATIONS = ("session_turn", "article", "recall", "context", "promote")
# The done-when: the quiet agent's p99 under flood within this multiple of its quiet p99.
TARGET_P99_RATIO = 2.0
MAX_CONNECTIONS = 64
MAX_SECONDS = 600
MAX_QUIET_RATE = 50.0
# A flooder's session takes this many turns before it moves to a new one, so its promotion
# requests keep finding new turns to compile.
TURNS_PER_SESSION = 10
# An article's body: long enough for the novelty gate to embed a real passage.
ARTICLE_SENTENCES = 8
SERVER_START_TIMEOUT_SECONDS = 180.0
# The longest a flooder's connection pauses after a 429 before its next request.
MAX_REFUSAL_PAUSE_SECONDS = 1.0
# The quiet agent's recalls before its baseline, not recorded.
WARMUP_SECONDS = 3.0


@dataclass(frozen=True)
class FloodPlan:
    url: str
    seconds: float
    quiet_seconds: float
    connections: int
    quiet_rate: float


def validate(plan: FloodPlan) -> FloodPlan:
    require_loopback(plan.url)
    if not 0 < plan.seconds <= MAX_SECONDS or not 0 < plan.quiet_seconds <= MAX_SECONDS:
        raise LoadBenchRefused(f"--seconds and --quiet-seconds must be in (0, {MAX_SECONDS}]")
    if not 1 <= plan.connections <= MAX_CONNECTIONS:
        raise LoadBenchRefused(f"--connections must be between 1 and {MAX_CONNECTIONS}")
    if not 0 < plan.quiet_rate <= MAX_QUIET_RATE:
        raise LoadBenchRefused(f"--quiet-rate must be in (0, {MAX_QUIET_RATE}]")
    return plan


def retry_after_seconds(payload: bytes) -> float:
    """A refusal's ``details.retry_after_seconds`` (the ``Retry-After`` header's value)."""
    try:
        return float(json.loads(payload)["error"]["details"]["retry_after_seconds"])
    except (ValueError, KeyError, TypeError):
        return 0.0


def outcome_label(status: str, payload: bytes) -> str:
    """``201``, or ``429 rate_limited``: the status with the envelope's code for an error."""
    if status.startswith("2") or not status.isdigit():
        return status
    try:
        code = json.loads(payload)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = "no_envelope"
    return f"{status} {code}"


class QuietAgent(threading.Thread):
    """Recalls at a fixed rate on one connection until stopped. A recall that comes back late
    delays the next one's start rather than bunching the schedule behind it."""

    def __init__(
        self, *, plan: FloodPlan, agent: Agent, topics: list[str], stop: threading.Event
    ) -> None:
        super().__init__(name="flood-quiet-agent", daemon=True)
        self.plan = plan
        self.agent = agent
        self.topics = topics
        self.stop_event = stop
        self.stats = OperationStats()
        self.sent = 0

    @override
    def run(self) -> None:
        http = KeepAliveClient(self.plan.url, token=self.agent.key)
        interval = 1.0 / self.plan.quiet_rate
        next_at = time.perf_counter()
        try:
            while not self.stop_event.is_set():
                wait = next_at - time.perf_counter()
                if wait > 0 and self.stop_event.wait(wait):
                    return
                query = unique_query(self.topics, client=0, clients=1, sent=self.sent)
                self.sent += 1
                started = time.perf_counter()
                status, payload = http.post_response(
                    "/api/v1/memory/recall", {"query": query, "limit": 10}
                )
                finished = time.perf_counter()
                self.stats.record(
                    milliseconds=(finished - started) * 1000,
                    status=outcome_label(status, payload),
                )
                next_at = max(next_at + interval, finished)
        finally:
            http.close()


class Flooder:
    """The noisy agent: ``connections`` threads, each cycling through every flood operation
    with no pause between requests."""

    def __init__(self, *, plan: FloodPlan, agent: Agent, run_id: str) -> None:
        self.plan = plan
        self.agent = agent
        self.run_id = run_id
        self.topics = distinct_topics(seed=int(run_id, 16) + 1)
        self.stats = {operation: OperationStats() for operation in FLOOD_OPERATIONS}
        self.lock = threading.Lock()

    def _requests(self, number: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for sent in itertools.count():
            operation = FLOOD_OPERATIONS[(number + sent) % len(FLOOD_OPERATIONS)]
            session_id = f"flood-{self.run_id}-{number}-{sent // (TURNS_PER_SESSION * 5)}"
            query = unique_query(
                self.topics, client=number, clients=self.plan.connections, sent=sent
            )
            tag = f"{self.run_id}-{number}-{sent}"
            if operation == "session_turn":
                body: dict[str, Any] = {
                    "role": "user",
                    "content": f"I prefer {query} ({tag}).",
                    "ttl_seconds": 3600,
                }
                yield operation, f"/api/v1/memory/sessions/{session_id}/turns", body
            elif operation == "article":
                sentences = " ".join(
                    f"{self.topics[(sent * ARTICLE_SENTENCES + i) % len(self.topics)]}."
                    for i in range(ARTICLE_SENTENCES)
                )
                body = {"title": f"Finding {tag}", "body": sentences, "category": "finding"}
                yield operation, "/api/v1/knowledge/articles", body
            elif operation == "recall":
                yield operation, "/api/v1/memory/recall", {"query": query, "limit": 10}
            elif operation == "context":
                yield operation, "/api/v1/knowledge/context", {"query": query, "limit": 5}
            else:
                yield operation, "/api/v1/memory/promote", {"session_id": session_id}

    def connection(self, number: int, stop: threading.Event) -> None:
        http = KeepAliveClient(self.plan.url, token=self.agent.key)
        try:
            for operation, path, body in self._requests(number):
                if stop.is_set():
                    return
                started = time.perf_counter()
                status, payload = http.post_response(path, body)
                elapsed = (time.perf_counter() - started) * 1000
                with self.lock:
                    self.stats[operation].record(
                        milliseconds=elapsed, status=outcome_label(status, payload)
                    )
                if status == "429":
                    # As a retrying client does, but at most a short pause: the flood resumes
                    # long before most windows end.
                    stop.wait(min(retry_after_seconds(payload), MAX_REFUSAL_PAUSE_SECONDS))
        finally:
            http.close()


def _phase(seconds: float, threads: list[threading.Thread], stop: threading.Event) -> float:
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    return time.perf_counter() - started


@contextmanager
def flooding(
    *, plan: FloodPlan, flooder: Agent, run_id: str
) -> Iterator[dict[str, OperationStats]]:
    """The flooder's connections for ``plan.seconds``, in a process of their own: eight busy
    client threads in the quiet agent's process would hold its GIL, and the quiet agent's
    latency would then measure its own client as much as the server. The dict it yields is
    filled with the flooder's figures when the block ends."""
    # A forked child must not share this process's database sockets: it talks HTTP only, and
    # this process reconnects on its next query.
    connections.close_all()
    context = multiprocessing.get_context("fork")
    results = context.SimpleQueue()
    child = context.Process(
        target=_flood_in_child, args=(plan, flooder, run_id, results), name="flood-flooder"
    )
    child.start()
    stats: dict[str, OperationStats] = {}
    try:
        yield stats
    finally:
        stats.update(results.get())
        child.join(timeout=60)


def _flood_in_child(
    plan: FloodPlan, flooder: Agent, run_id: str, results: multiprocessing.SimpleQueue[Any]
) -> None:
    noisy = Flooder(plan=plan, agent=flooder, run_id=run_id)
    stop = threading.Event()
    connections_ = [
        threading.Thread(target=noisy.connection, args=(number, stop), daemon=True)
        for number in range(plan.connections)
    ]
    _phase(plan.seconds, connections_, stop)
    results.put(noisy.stats)


def _ratio(flooded: float | None, quiet: float | None) -> float | None:
    return round(flooded / quiet, 2) if flooded is not None and quiet else None


def run(*, plan: FloodPlan, flooder: Agent, quiet: Agent) -> dict[str, Any]:
    """The quiet agent alone for ``plan.quiet_seconds``, then beside the flood for
    ``plan.seconds``."""
    run_id = uuid.uuid4().hex[:6]
    topics = distinct_topics(seed=int(run_id, 16))

    # Unrecorded: the first recalls of each web process load what the rest reuse.
    warm_stop = threading.Event()
    warm = QuietAgent(plan=plan, agent=quiet, topics=topics[-1000:], stop=warm_stop)
    _phase(WARMUP_SECONDS, [warm], warm_stop)

    alone_stop = threading.Event()
    alone = QuietAgent(plan=plan, agent=quiet, topics=topics[:-1000], stop=alone_stop)
    machine_before = MachineTimes.read()
    alone_seconds = _phase(plan.quiet_seconds, [alone], alone_stop)
    machine_alone = MachineTimes.read()

    flood_stop = threading.Event()
    # The flooded phase asks the quiet agent's later topics: none was asked alone.
    beside = QuietAgent(
        plan=plan, agent=quiet, topics=topics[len(topics) // 2 : -1000], stop=flood_stop
    )
    processes_before = read_process_ticks()
    with flooding(plan=plan, flooder=flooder, run_id=run_id) as flood_stats:
        flood_seconds = _phase(plan.seconds, [beside], flood_stop)
    machine_flood = MachineTimes.read()
    processes_after = read_process_ticks()

    quiet_alone = alone.stats.summary(alone_seconds)
    quiet_flooded = beside.stats.summary(flood_seconds)
    flood = {name: stats.summary(flood_seconds) for name, stats in flood_stats.items()}
    flood_requests = sum(figures["requests"] for figures in flood.values())
    refused: dict[str, dict[str, int]] = {
        name: {
            label: count
            for label, count in figures["statuses"].items()
            if not label.startswith("2")
        }
        for name, figures in flood.items()
    }
    p99_ratio = _ratio(quiet_flooded["p99_ms"], quiet_alone["p99_ms"])
    return {
        "quiet_alone": quiet_alone,
        "quiet_under_flood": quiet_flooded,
        "p50_ratio": _ratio(quiet_flooded["p50_ms"], quiet_alone["p50_ms"]),
        "p99_ratio": p99_ratio,
        "within_target": p99_ratio is not None and p99_ratio <= TARGET_P99_RATIO,
        "flood": flood,
        "flood_requests": flood_requests,
        "flood_refused": refused,
        "machine_alone": machine_cpu(
            machine_before, machine_alone, requests=quiet_alone["requests"]
        ),
        "machine_under_flood": machine_cpu(
            machine_alone,
            machine_flood,
            requests=flood_requests + quiet_flooded["requests"],
        ),
        "cpu_ms_per_request_by_process": cpu_by_role(
            processes_before,
            processes_after,
            requests=flood_requests + quiet_flooded["requests"],
        ),
    }


def flood_bench(*, plan: FloodPlan, memories_per_agent: int) -> dict[str, Any]:
    """Seed two agents of one tenant, run, and remove the tenant once the server's worker has
    embedded what the flood wrote."""
    tenant, (flooder, quiet) = seed(agents=2, memories_per_agent=memories_per_agent)
    try:
        report = run(plan=plan, flooder=flooder, quiet=quiet)
        report["embedding"] = wait_embedded(tenant=tenant)
    finally:
        removed = remove(tenant=tenant)
    report.update(
        {
            "url": plan.url,
            "seconds": plan.seconds,
            "quiet_seconds": plan.quiet_seconds,
            "connections": plan.connections,
            "quiet_rate": plan.quiet_rate,
            "memories_per_agent": memories_per_agent,
            "memories_removed": removed,
        }
    )
    return report


def flood_bench_repeated(
    *, plan: FloodPlan, memories_per_agent: int, repeat: int
) -> dict[str, Any]:
    """:func:`flood_bench` ``repeat`` times against the same server, with the median ratios: a
    p99 over a few hundred recalls is close to their maximum, so one run's ratio moves with
    whatever else the machine did in either phase."""
    runs = [flood_bench(plan=plan, memories_per_agent=memories_per_agent) for _ in range(repeat)]
    p99_ratios = [run["p99_ratio"] for run in runs if run["p99_ratio"] is not None]
    p50_ratios = [run["p50_ratio"] for run in runs if run["p50_ratio"] is not None]
    p99_median = statistics.median(p99_ratios) if p99_ratios else None
    return {
        "runs": runs,
        "p99_ratio_median": p99_median,
        "p50_ratio_median": statistics.median(p50_ratios) if p50_ratios else None,
        "within_target": p99_median is not None and p99_median <= TARGET_P99_RATIO,
    }


# ----------------------------------------------------------------------------- --serve


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(url: str) -> bool:
    import http.client

    port = int(url.rsplit(":", 1)[1])
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/readyz")
        ready = connection.getresponse().status == 200
        connection.close()
    except OSError:
        return False
    return ready


@contextmanager
def served(*, log: Path, say: Callable[[str], None]) -> Iterator[str]:
    """``scripts/run.sh`` (what ``make run`` starts: migrations, gunicorn sized from the cores,
    the Celery worker and beat) on a free port with this process's environment, so the bench
    and the server share one database; stopped afterwards."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    # The bench's own connections are closed first: run.sh's shutdown may stop the embedded
    # database under them.
    connections.close_all()
    with log.open("ab") as output:
        server = subprocess.Popen(  # noqa: S603 - a fixed argv
            [shutil.which("bash") or "/bin/bash", str(ROOT / "scripts" / "run.sh")],
            cwd=ROOT,
            env={**os.environ, "PORT": str(port), "ENGRAM_WEB_ACCESS_LOG": "/dev/null"},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
        while not _ready(url):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"scripts/run.sh did not become ready (log: {log})")
            time.sleep(0.5)
        say(f"serving on {url} (log: {log})")
        yield url
    finally:
        connections.close_all()
        stop_process_group(server)
