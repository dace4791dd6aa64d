"""HTTP load against a running Engram: concurrent clients, requests/s and latency per operation.

The load generator runs threads in this process, one keep-alive HTTP client each, against a
server on the loopback interface only (it measures this machine, never someone else's). Its
tenant, agents and seeded memories are written through the services, embedded before the
clock starts, and removed at the end.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import statistics
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.db import connection

from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_create_many, memory_drain_embeddings
from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create, tenant_create
from lab.http_client import KeepAliveClient
from lab.memory_bench import distinct_topics, synthetic_sentences

MIXES = ("recall", "write", "mixed")
# `unique`: every recall is a natural sentence never asked before in the run (a user's new
# turn; no query-vector cache can help), as long as a memory's topic (~17 tokens; LoCoMo's
# questions have a median of 14). `repeat`: each agent cycles through its 50 topics (an agent
# re-asking).
QUERIES_UNIQUE = "unique"
QUERIES_REPEAT = "repeat"
QUERY_PATTERNS = (QUERIES_UNIQUE, QUERIES_REPEAT)
# Upper bounds so a mistyped flag cannot turn the benchmark into a flood.
MAX_CLIENTS = 64
MAX_SECONDS = 600
MAX_REQUESTS = 1_000_000
# In the mixed load, one request in this many is a write (agents recall far more than write).
MIXED_WRITE_EVERY = 4
# After the seed is embedded: how long a batch the server's worker claimed may still run, and
# a pause for it to go idle before the clock starts.
SEED_SETTLE_TIMEOUT_SECONDS = 60.0
SEED_SETTLE_SECONDS = 1.0
# After the clock stops: how long to wait for the server's worker to embed the run's writes.
EMBEDDED_WAIT_SECONDS = 300.0
EMBEDDED_POLL_SECONDS = 0.1


# The tables the seed fills most: analysed before the clock starts, and vacuumed of what the
# tenant's removal leaves dead before load_bench returns (otherwise the autovacuum of one run,
# an HNSW index vacuum being seconds of CPU, lands inside the next).
SEEDED_TABLES = ("memory_memory", "memory_search_term")
PROC_STAT = "/proc/stat"


class LoadBenchRefused(Exception):
    """The target is not a loopback server, or a bound is out of range."""


def require_loopback(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise LoadBenchRefused(f"{url!r} is not an http(s) URL")
    host = parts.hostname
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise LoadBenchRefused(f"{host} is not a loopback address; load_bench runs locally")
    return url.rstrip("/")


@dataclass
class OperationStats:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)

    def record(self, *, milliseconds: float, status: str) -> None:
        self.latencies_ms.append(milliseconds)
        self.statuses[status] += 1

    def summary(self, seconds: float) -> dict[str, Any]:
        ordered = sorted(self.latencies_ms)
        ok = sum(count for status, count in self.statuses.items() if status.startswith("2"))

        def percentile(share: float) -> float | None:
            if not ordered:
                return None
            return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 2)

        return {
            "requests": len(ordered),
            "ok": ok,
            "errors": len(ordered) - ok,
            "per_s": round(ok / seconds, 1) if seconds else 0.0,
            "p50_ms": round(statistics.median(ordered), 2) if ordered else None,
            "p95_ms": percentile(0.95),
            "p99_ms": percentile(0.99),
            "statuses": dict(sorted(self.statuses.items())),
        }


@dataclass(frozen=True)
class Agent:
    agent_id: str
    key: str
    queries: tuple[str, ...]


@dataclass
class LoadPlan:
    url: str
    clients: int
    seconds: float
    mix: str
    max_requests: int
    queries: str = QUERIES_UNIQUE


def seed(
    *, agents: int, memories_per_agent: int, settle_seconds: float = SEED_SETTLE_SECONDS
) -> tuple[Tenant, list[Agent]]:
    tenant = tenant_create(slug=f"load-{uuid.uuid4().hex[:8]}", name="load_bench")
    seeded: list[Agent] = []
    texts = synthetic_sentences(agents * memories_per_agent, seed=7)
    for index in range(agents):
        agent_id = f"load-agent-{index}"
        issued = api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id=agent_id)
        mine = texts[index * memories_per_agent : (index + 1) * memories_per_agent]
        memory_create_many(
            tenant=tenant,
            subject_id=agent_id,
            drafts=[MemoryDraft(text=text) for text in mine],
        )
        # Queries are the memories' own topics, without the note number: realistic recalls.
        queries = tuple(text.rsplit(" (note", 1)[0] for text in mine[:50])
        seeded.append(Agent(agent_id=agent_id, key=issued.raw_key, queries=queries))
    _embed_seed(tenant=tenant, settle_seconds=settle_seconds)
    _analyze_seed()
    return tenant, seeded


def _embed_seed(*, tenant: Tenant, settle_seconds: float) -> None:
    """Embed the seeded rows before the clock starts, and let the server's worker go idle.

    The seed's writes wake the server's drain too. Draining here, through the same
    ``SKIP LOCKED`` claim, splits the rows with that drain instead of embedding them twice,
    and the short wait lets the worker's last batch finish: an embedding still running in
    the worker when the clock starts would take the server's cores from the requests.
    """
    while memory_drain_embeddings(tenant_id=tenant.pk).more:
        pass
    deadline = time.monotonic() + SEED_SETTLE_TIMEOUT_SECONDS
    pending = Memory.objects.filter(tenant=tenant, embedding__isnull=True)
    while pending.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(settle_seconds)


def _analyze_seed() -> None:
    """Refresh the planner's statistics for the tables the seed filled, as autovacuum does
    within a minute of a bulk write: without it, whether the run plans against the seeded
    table or the empty one depends on where the autovacuum launcher's cycle fell."""
    with connection.cursor() as cursor:
        for table in SEEDED_TABLES:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")


def wait_embedded(*, tenant: Tenant, timeout: float = EMBEDDED_WAIT_SECONDS) -> dict[str, Any]:
    """How far the server's worker is behind the acknowledged writes when the clock stops:
    the rows still without a vector then, and how long after that the last one got one
    (``None`` if not within ``timeout``). Until then those writes are found by keyword only."""
    pending = Memory.objects.filter(tenant=tenant, embedding__isnull=True)
    started = time.perf_counter()
    at_stop = pending.count()
    remaining = at_stop
    while remaining and time.perf_counter() - started < timeout:
        time.sleep(EMBEDDED_POLL_SECONDS)
        remaining = pending.count()
    return {
        "pending_at_stop": at_stop,
        "all_embedded_after_s": None if remaining else round(time.perf_counter() - started, 1),
    }


def remove(*, tenant: Tenant) -> int:
    """Delete the load tenant (every tenant-owned row cascades with it) and vacuum the tables
    it filled most."""
    memories = Memory.objects.filter(tenant=tenant).count()
    Tenant.objects.filter(pk=tenant.pk).delete()
    with connection.cursor() as cursor:
        for table in SEEDED_TABLES:
            cursor.execute(f"VACUUM {connection.ops.quote_name(table)}")
    return memories


@dataclass(frozen=True)
class MachineTimes:
    """The machine's CPU time (all cores, every process) from the kernel's counters, in
    clock ticks: the server, Postgres, the worker and this load generator share these cores,
    so CPU per request is what bounds requests/s, and it moves less with the machine's
    load than the rate does."""

    busy: int
    steal: int
    total: int

    @classmethod
    def read(cls) -> MachineTimes | None:
        try:
            with open(PROC_STAT, encoding="ascii") as stat:
                fields = [int(value) for value in stat.readline().split()[1:]]
        except (OSError, ValueError):
            return None  # not Linux: the figures are left out
        # user nice system idle iowait irq softirq steal (guest time is inside user)
        idle, iowait, steal = fields[3], fields[4], fields[7] if len(fields) > 7 else 0
        total = sum(fields[:8])
        return cls(busy=total - idle - iowait - steal, steal=steal, total=total)


def machine_cpu(
    before: MachineTimes | None, after: MachineTimes | None, *, requests: int
) -> dict[str, Any] | None:
    """Busy and stolen shares of the machine's cores over the run, and busy CPU per request."""
    if before is None or after is None or after.total <= before.total:
        return None
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    busy = after.busy - before.busy
    total = after.total - before.total
    return {
        "busy_share": round(busy / total, 3),
        "steal_share": round((after.steal - before.steal) / total, 3),
        "cpu_ms_per_request": round(1000 * busy / ticks_per_second / requests, 2)
        if requests
        else None,
    }


# A process's role, from its command line. This process is the load generator; anything else
# (the shell, the machine's own services) is "other". A process that exits inside the run is
# still counted once its parent reaps it: the kernel adds a reaped child's time to its parent's
# (a Postgres backend closed at ENGRAM_DB_CONN_MAX_AGE to the postmaster, a gunicorn or Celery
# child to its master), and every role's children are of its own role.
ROLE_LOAD_GENERATOR = "load generator"
ROLE_OTHER = "other"


def process_role(command_line: str) -> str:
    words = command_line.split()
    if not words:
        return ROLE_OTHER
    program = os.path.basename(words[0])
    if "gunicorn" in command_line or "runserver" in words:
        return "web"
    if "celery" in program or (len(words) > 1 and os.path.basename(words[1]) == "celery"):
        return "beat" if "beat" in words else "worker"
    # Backends rename themselves ("postgres: user db [local] idle").
    if program.startswith("postgres"):
        return "postgres"
    return ROLE_OTHER


def read_process_ticks(
    proc: str = "/proc", *, keep: Callable[..., bool] | None = None
) -> dict[int, tuple[str, int]]:
    """Every live process's role and CPU time so far, its reaped children's included (user +
    system, in clock ticks); with ``keep``, only the processes it accepts (called with the
    keywords ``pid``, ``parent`` and ``role``)."""
    own = os.getpid()
    ticks: dict[int, tuple[str, int]] = {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return ticks  # not Linux: the split is left out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/cmdline", "rb") as handle:
                command_line = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"{proc}/{entry}/stat", encoding="ascii", errors="replace") as handle:
                # The command name in parentheses may hold spaces: the fields follow the last ")".
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited meanwhile, or a kernel thread without a readable stat
        pid = int(entry)
        role = ROLE_LOAD_GENERATOR if pid == own else process_role(command_line)
        if keep is not None and not keep(pid=pid, parent=int(fields[1]), role=role):
            continue
        # Fields 14-17 of stat (utime, stime, cutime, cstime), counted from the state field as 3.
        ticks[pid] = (role, sum(int(value) for value in fields[11:15]))
    return ticks


def cpu_by_role(
    before: dict[int, tuple[str, int]], after: dict[int, tuple[str, int]], *, requests: int
) -> dict[str, float]:
    """CPU milliseconds per request spent by each role over the run, largest first. A process
    born during the run counts from zero. One that exited has its whole life in its parent's
    children time by the end, so its time before the run is taken off its role."""
    if not requests or not after:
        return {}
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    spent: Counter[str] = Counter()
    # A survivor's time before the run, an exited process's (its parent now holds it) and that
    # of a process whose pid was reused (the new one counts from zero) all come off.
    for role, total in after.values():
        spent[role] += total
    for role, total in before.values():
        spent[role] -= total
    return {
        role: round(1000 * ticks / ticks_per_second / requests, 2)
        for role, ticks in spent.most_common()
        if ticks > 0
    }


def _operations(plan: LoadPlan) -> Callable[[int], str]:
    if plan.mix == "recall":
        return lambda _n: "recall"
    if plan.mix == "write":
        return lambda _n: "write"
    return lambda n: "write" if n % MIXED_WRITE_EVERY == 0 else "recall"


def run(*, plan: LoadPlan, agents: Sequence[Agent]) -> dict[str, Any]:
    """Drive ``plan.clients`` threads until the time or the request budget runs out."""
    stats: dict[str, OperationStats] = {"recall": OperationStats(), "write": OperationStats()}
    lock = threading.Lock()
    budget = itertools.count()
    deadline = time.perf_counter() + plan.seconds
    operation_for = _operations(plan)
    run_id = uuid.uuid4().hex[:6]
    fresh_topics = distinct_topics(seed=int(run_id, 16))

    def client(number: int) -> None:
        agent = agents[number % len(agents)]
        http = KeepAliveClient(plan.url, token=agent.key)
        try:
            for sent in itertools.count():
                ticket = next(budget)
                if ticket >= plan.max_requests or time.perf_counter() >= deadline:
                    return
                operation = operation_for(ticket)
                if operation == "recall":
                    if plan.queries == QUERIES_UNIQUE:
                        query = unique_query(
                            fresh_topics, client=number, clients=plan.clients, sent=sent
                        )
                    else:
                        query = agent.queries[sent % len(agent.queries)]
                    path, body = "/api/v1/memory/recall", {"query": query, "limit": 10}
                else:
                    text = f"Load note {run_id}-{number}-{sent}: the build cache was warmed."
                    path, body = "/api/v1/memory", {"text": text}
                started = time.perf_counter()
                status = http.post(path, body)
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    stats[operation].record(milliseconds=elapsed, status=status)
        finally:
            http.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(plan.clients)]
    machine_before = MachineTimes.read()
    processes_before = read_process_ticks()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    machine_after = MachineTimes.read()
    processes_after = read_process_ticks()
    requests = sum(len(op.latencies_ms) for op in stats.values())
    return {
        "seconds": round(seconds, 2),
        "operations": {name: op.summary(seconds) for name, op in stats.items() if op.latencies_ms},
        "machine": machine_cpu(machine_before, machine_after, requests=requests),
        "cpu_ms_per_request_by_process": cpu_by_role(
            processes_before, processes_after, requests=requests
        ),
    }


def unique_query(topics: Sequence[str], *, client: int, clients: int, sent: int) -> str:
    """The ``sent``-th query of client ``client`` of ``clients``: the clients deal ``topics``
    among themselves, so no text is asked twice in the run; a client that has asked all of
    its share asks them again with the round's number."""
    share = max(1, len(topics) // clients)
    rounds, place = divmod(sent, share)
    topic = topics[place * clients + client]
    return topic if rounds == 0 else f"{topic} ({rounds + 1})"


def validate(plan: LoadPlan) -> LoadPlan:
    require_loopback(plan.url)
    if plan.mix not in MIXES:
        raise LoadBenchRefused(f"--mix must be one of {', '.join(MIXES)}")
    if plan.queries not in QUERY_PATTERNS:
        raise LoadBenchRefused(f"--queries must be one of {', '.join(QUERY_PATTERNS)}")
    if not 1 <= plan.clients <= MAX_CLIENTS:
        raise LoadBenchRefused(f"--clients must be between 1 and {MAX_CLIENTS}")
    if not 0 < plan.seconds <= MAX_SECONDS:
        raise LoadBenchRefused(f"--seconds must be between 1 and {MAX_SECONDS}")
    if not 1 <= plan.max_requests <= MAX_REQUESTS:
        raise LoadBenchRefused(f"--max-requests must be between 1 and {MAX_REQUESTS}")
    return plan
