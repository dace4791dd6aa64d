"""What a recall and a write cost the service in CPU, next to the embedding they cannot avoid.

One agent with embedded memories (its tables vacuumed before the clock starts), one keep-alive
client, requests one after another: first ``recalls`` recalls whose questions were never asked
before in the run (no query-vector cache can help), then ``writes`` single writes, whose
window stays open until the server's worker has embedded every one of them. Each window sums
the CPU of every process of the service under test, and of nothing else on the machine: the
web, worker and beat processes running from the listening server's directory, and the Postgres
cluster the server uses (its postmaster and backends, less this process's own backend), each
with its reaped children.

In the same run this process then embeds the same inputs through the deployment's own
provider: every recall question once through the query encoder, as a recall does, and the
writes' texts in the worker's batches. The ratio of the two is how far the service is from the
floor its model sets; the difference, in milliseconds, is what the service adds around it.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection

from apps.providers.embeddings import embed_search_query, embed_texts
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config
from lab import load_bench
from lab.http_client import KeepAliveClient
from lab.memory_bench import distinct_topics, synthetic_sentences

DEFAULT_RECALLS = 200
DEFAULT_WRITES = 200
DEFAULT_MEMORIES = 300
DEFAULT_REPEAT = 1
MAX_REPEAT = 9
# Recalls sent before the clock starts: the web process's first requests open its database
# connection and prepare its statements, which a warm service has long done.
WARMUP_RECALLS = 20
RECALL_PATH = "/api/v1/memory/recall"
WRITE_PATH = "/api/v1/memory"
# /proc/net/tcp{,6}: a listening socket's state, and the columns of its address and inode.
TCP_LISTEN = "0A"
TCP_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
SERVICE_ROLES = frozenset({"web", "worker", "beat"})


class CpuFloorRefused(Exception):
    """No server listens on the URL's port, or a bound is out of range."""


@dataclass(frozen=True)
class FloorPlan:
    url: str
    recalls: int = DEFAULT_RECALLS
    writes: int = DEFAULT_WRITES
    memories: int = DEFAULT_MEMORIES
    repeat: int = DEFAULT_REPEAT


def validate(plan: FloorPlan) -> FloorPlan:
    load_bench.require_loopback(plan.url)
    if not 1 <= plan.recalls <= load_bench.MAX_REQUESTS:
        raise CpuFloorRefused(f"--recalls must be between 1 and {load_bench.MAX_REQUESTS}")
    if not 1 <= plan.writes <= load_bench.MAX_REQUESTS:
        raise CpuFloorRefused(f"--writes must be between 1 and {load_bench.MAX_REQUESTS}")
    if plan.memories < 1:
        raise CpuFloorRefused("--memories must be at least 1")
    if not 1 <= plan.repeat <= MAX_REPEAT:
        raise CpuFloorRefused(f"--repeat must be between 1 and {MAX_REPEAT}")
    return plan


@dataclass(frozen=True)
class ServiceProcesses:
    """Which of the machine's processes are the service under test."""

    #: The working directory of the process listening on the URL's port; the service's web,
    #: worker and beat processes all run from it (``make run``).
    directory: str
    postmaster: int
    #: This process's own backend: the harness's polling is not the service's work.
    own_backend: int

    def includes(self, *, pid: int, parent: int, role: str) -> bool:
        if role == "postgres":
            return pid != self.own_backend and self.postmaster in (pid, parent)
        return role in SERVICE_ROLES and _working_directory(pid) == self.directory


def _working_directory(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def listening_pids(port: int) -> set[int]:
    """The processes holding a socket that listens on ``port`` (any local address)."""
    inodes: set[str] = set()
    for table in TCP_TABLES:
        try:
            with open(table, encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            columns = row.split()
            local, state, inode = columns[1], columns[3], columns[9]
            if state == TCP_LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    pids: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            descriptors = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(f"/proc/{entry}/fd/{descriptor}") in inodes:
                    pids.add(int(entry))
                    break
            except OSError:
                continue
    return pids


def parent_pid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def find_service(url: str) -> ServiceProcesses:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    directories = {
        directory
        for directory in map(_working_directory, listening_pids(port))
        if directory is not None
    }
    if len(directories) != 1:
        raise CpuFloorRefused(
            f"expected one server directory listening on port {port}, found {sorted(directories)}"
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    return ServiceProcesses(
        directory=directories.pop(), postmaster=parent_pid(backend), own_backend=backend
    )


def _measured(
    service: ServiceProcesses, work: Callable[[], int]
) -> tuple[int, dict[str, float], float]:
    """Run ``work`` (which returns how many requests it made) and return that count, the
    service's CPU milliseconds per request by role, and the wall seconds."""
    keep = service.includes
    before = load_bench.read_process_ticks(keep=keep)
    started = time.perf_counter()
    count = work()
    seconds = time.perf_counter() - started
    after = load_bench.read_process_ticks(keep=keep)
    return count, load_bench.cpu_by_role(before, after, requests=count), seconds


def _send(http: KeepAliveClient, path: str, bodies: Sequence[dict[str, Any]]) -> int:
    for body in bodies:
        status = http.post(path, body)
        if not status.startswith("2"):
            raise CpuFloorRefused(f"POST {path} answered {status}; the figures would be wrong")
    return len(bodies)


def _process_cpu_ms(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return 1000 * (time.process_time() - started)


def _phase(
    *, count: int, by_role: dict[str, float], seconds: float, embedding_ms: float
) -> dict[str, Any]:
    service_ms = round(sum(by_role.values()), 2)
    return {
        "requests": count,
        "service_cpu_ms": service_ms,
        "embedding_cpu_ms": round(embedding_ms, 2),
        "ratio": round(service_ms / embedding_ms, 2) if embedding_ms else None,
        "overhead_ms": round(service_ms - embedding_ms, 2),
        "by_process": by_role,
        "wall_ms": round(1000 * seconds / count, 2),
    }


def run_once(plan: FloorPlan, service: ServiceProcesses) -> dict[str, Any]:
    tenant, (agent,) = load_bench.seed(agents=1, memories_per_agent=plan.memories)
    try:
        _vacuum_seed()
        return _measure(plan, service, tenant=tenant, key=agent.key)
    finally:
        load_bench.remove(tenant=tenant)


def _measure(
    plan: FloorPlan, service: ServiceProcesses, *, tenant: Tenant, key: str
) -> dict[str, Any]:
    run_seed = uuid.uuid4().int % (1 << 31)
    topics = distinct_topics(seed=run_seed)
    warmup = topics[:WARMUP_RECALLS]
    questions = [
        load_bench.unique_query(topics[WARMUP_RECALLS:], client=0, clients=1, sent=sent)
        for sent in range(plan.recalls)
    ]
    texts = synthetic_sentences(plan.writes, seed=run_seed)
    http = KeepAliveClient(plan.url, token=key)
    try:
        _send(http, RECALL_PATH, [{"query": query, "limit": 10} for query in warmup])
        recalls = _measured(
            service,
            lambda: _send(http, RECALL_PATH, [{"query": q, "limit": 10} for q in questions]),
        )

        def write_and_wait() -> int:
            sent = _send(http, WRITE_PATH, [{"text": text} for text in texts])
            waited = load_bench.wait_embedded(tenant=tenant)
            if waited["all_embedded_after_s"] is None:
                raise CpuFloorRefused("the server's worker did not embed the writes in time")
            return sent

        writes = _measured(service, write_and_wait)
    finally:
        http.close()

    config = tenant_embedding_config(tenant=tenant)
    # Both encoders loaded before their clocks start, as they are in a warm server.
    embed_search_query(config, warmup[0])
    embed_texts(config, texts[:1])
    recall_floor = _process_cpu_ms(lambda: [embed_search_query(config, q) for q in questions])
    batch = max(1, settings.EMBEDDING_BATCH_SIZE)
    write_floor = _process_cpu_ms(
        lambda: [embed_texts(config, texts[i : i + batch]) for i in range(0, len(texts), batch)]
    )
    count, by_role, seconds = recalls
    recall = _phase(
        count=count, by_role=by_role, seconds=seconds, embedding_ms=recall_floor / len(questions)
    )
    count, by_role, seconds = writes
    write = _phase(
        count=count, by_role=by_role, seconds=seconds, embedding_ms=write_floor / len(texts)
    )
    return {"recall": recall, "write": write}


def _vacuum_seed() -> None:
    """Vacuum what the seed wrote (each embedded row left a dead version behind) before the
    clock starts: otherwise autovacuum, which a deployment runs for its writes, would run on
    the seed's tables inside the recall window, in a backend of the service's cluster."""
    with connection.cursor() as cursor:
        for table in load_bench.SEEDED_TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(table)}")


def run(plan: FloorPlan) -> dict[str, Any]:
    """``plan.repeat`` runs, each on a fresh tenant, and the median of each figure."""
    service = find_service(plan.url)
    runs = [run_once(plan, service) for _ in range(plan.repeat)]
    return {
        "url": plan.url,
        "service_directory": service.directory,
        "memories": plan.memories,
        "embedding_threads": settings.LOCAL_EMBEDDING_THREADS,
        "runs": runs,
        "median": {phase: _median_phase([run[phase] for run in runs]) for phase in runs[0]},
    }


def _median_phase(phases: Sequence[dict[str, Any]]) -> dict[str, Any]:
    figures = ("service_cpu_ms", "embedding_cpu_ms", "ratio", "overhead_ms", "wall_ms")
    median = {
        figure: round(statistics.median(phase[figure] for phase in phases), 2) for figure in figures
    }
    roles = sorted({role for phase in phases for role in phase["by_process"]})
    median["by_process"] = {
        role: round(statistics.median(phase["by_process"].get(role, 0.0) for phase in phases), 2)
        for role in roles
    }
    return median
