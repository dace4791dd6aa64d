"""The fault-injection run: load from concurrent clients while the worker is SIGKILLed and
restarted, the broker stopped and started, the embedding provider failing, and Postgres
restarted; then an audit of what was acknowledged against what is stored.

Before the load, the anonymous-MCP case (:mod:`lab.faults.mcp`): an ``engram-mcp`` over HTTP
started with the first client's key is asked for memories without a usable key, and by another
agent.

After the audit, the flood cases (:mod:`lab.faults.floods`): the web restarted with low bounds,
one agent floods each kind of row it can create, and the case reports what was refused and
checks that no other subject or tenant changed.

Pass criteria: nothing acknowledged is lost or stored twice, every memory ends up embedded, no
promotion job is left in flight, the worker started after the SIGKILL outlives every later
fault, the only server errors clients saw were 503s with ``Retry-After`` while the database was
down, and the MCP server refused every keyless request with 401 and showed no caller another
subject's memories, and every flood case passed.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from typing_extensions import override

from lab.faults.floods import FLOOD_CASE_BOUNDS
from lab.faults.load import Client, ClientLog
from lab.faults.mcp import engram_mcp_http, probe_anonymous_mcp
from lab.faults.stack import Stack

DB_DOWN_GRACE_S = 5.0  # connections re-established after the restart may fail once
RECOVERY_DEADLINE_S = 240.0
BEAT_INTERVAL_S = 3.0


@dataclass
class Fault:
    name: str
    started: float
    ended: float = 0.0
    note: str = ""


@dataclass
class Run:
    stack: Stack
    clients: int
    say: Callable[[str], None]
    faults: list[Fault] = field(default_factory=list)
    tenant_id: str = ""
    t0: float = field(default_factory=time.monotonic)

    def fault(self, name: str) -> Fault:
        self.say(f"fault: {name}")
        fault = Fault(name=name, started=time.monotonic())
        self.faults.append(fault)
        return fault


SETUP = """
import json
from apps.tenancy.services import api_key_create, tenant_create
tenant = tenant_create(slug="fault", name="fault suite")
keys = [
    api_key_create(tenant=tenant, role="agent", agent_id=f"client-{{i}}").raw_key
    for i in range({clients})
]
peer = api_key_create(tenant=tenant, role="agent", agent_id="{peer}").raw_key
print(json.dumps({{"tenant": str(tenant.pk), "keys": keys, "peer": peer}}))
"""
MCP_PEER = "mcp-peer"


def _setup_tenant(stack: Stack, clients: int) -> tuple[str, list[str], str]:
    """One tenant, an agent key per client and one for the MCP case's peer, in one process
    (each start costs seconds)."""
    script = SETUP.format(clients=clients, peer=MCP_PEER)
    out = json.loads(stack.manage("shell", "-c", script).splitlines()[-1])
    return str(out["tenant"]), [str(key) for key in out["keys"]], str(out["peer"])


def _wait_ready(stack: Stack, key: str) -> None:
    """The web answers and the worker embeds: a probe memory gets its vector."""
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=f"{stack.web_url}/api/v1", timeout=10) as http:
        while time.monotonic() < deadline:
            try:
                written = http.post(
                    "/memory",
                    json={"text": "probe: the stack is up"},
                    headers={"Authorization": f"Bearer {key}"},
                )
                if written.status_code == 201:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            raise RuntimeError("the web server never accepted a write")
    while time.monotonic() < deadline:
        if _scalar(stack, "SELECT count(*) FROM memory_memory WHERE embedding IS NULL") == 0:
            return
        time.sleep(0.5)
    raise RuntimeError("the worker never embedded the probe memory")


def _scalar(stack: Stack, sql: str, params: tuple[Any, ...] = ()) -> int:
    with stack.connect() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


class Beat(threading.Thread):
    """Plays celery beat: sends the backfill and the promotion sweep every few seconds."""

    def __init__(self, stack: Stack, stop: threading.Event) -> None:
        super().__init__(name="fault-beat", daemon=True)
        from celery import Celery

        self.app = Celery("fault-beat", broker=stack.broker_url, set_as_current=False)
        self.app.conf.broker_connection_timeout = 1
        self.stop = stop
        self.sent = 0

    @override
    def run(self) -> None:
        while not self.stop.wait(BEAT_INTERVAL_S):
            for task in ("memory.backfill_embeddings", "memory.promotion_sweep"):
                try:
                    self.app.send_task(task, retry=False)
                    self.sent += 1
                except Exception:  # noqa: S110 - the broker is down on purpose; beat retries too
                    pass


def _anonymous_mcp(run: Run, *, own_key: str, peer_key: str) -> dict[str, Any]:
    """The MCP server, holding ``own_key`` (whose subject has the probe memory), asked for
    memories without a key and by the peer."""
    with engram_mcp_http(
        api_url=run.stack.web_url, own_key=own_key, log=run.stack.root / "mcp.log"
    ) as url:
        report = probe_anonymous_mcp(
            url, own_key=own_key, other_key=peer_key, other_subject=MCP_PEER
        )
    for case, status in report["keyless_requests"].items():
        run.say(f"mcp: {case} -> {status}")
    run.say(
        f"mcp: {report['foreign_memories_read'] + report['memories_read_without_a_key']} "
        "memories of another subject read"
    )
    return report


def _kill_worker_mid_job(run: Run) -> None:
    fault = run.fault("worker SIGKILL")
    deadline = time.monotonic() + 8
    busy = 0
    while time.monotonic() < deadline:
        busy = _scalar(
            run.stack, "SELECT count(*) FROM memory_promotionjob WHERE status = 'running'"
        )
        if busy:
            break
        time.sleep(0.05)
    run.stack.kill_worker()
    fault.note = f"{busy} promotion job(s) running at the kill"
    time.sleep(2)
    run.stack.start_worker()
    fault.ended = time.monotonic()


def _stop_broker(run: Run, seconds: float) -> None:
    fault = run.fault("broker stopped")
    run.stack.stop_redis()
    time.sleep(seconds)
    run.stack.start_redis()
    fault.ended = time.monotonic()


def _fail_provider(run: Run, seconds: float) -> None:
    fault = run.fault("embedding provider failing")
    run.stack.embeddings.failing = True
    time.sleep(seconds)
    run.stack.embeddings.failing = False
    fault.ended = time.monotonic()


def _restart_postgres(run: Run, seconds: float) -> Fault:
    fault = run.fault("postgres restart")
    run.stack.stop_postgres()
    time.sleep(seconds)
    run.stack.start_postgres()
    fault.ended = time.monotonic()
    return fault


def _audit(run: Run, log: ClientLog, db_fault: Fault) -> dict[str, Any]:
    with run.stack.connect() as conn:
        stored_memories = dict(
            conn.execute(
                "SELECT text, count(*) FROM memory_memory "
                "WHERE tenant_id = %s AND source <> 'promoted' GROUP BY text",
                (run.tenant_id,),
            ).fetchall()
        )
        stored_turns = dict(
            conn.execute(
                "SELECT content, count(*) FROM memory_sessionmemory WHERE tenant_id = %s "
                "GROUP BY content",
                (run.tenant_id,),
            ).fetchall()
        )
        jobs = dict(
            conn.execute("SELECT status, count(*) FROM memory_promotionjob GROUP BY status")
        )
        promoted = conn.execute(
            "SELECT count(*) FROM memory_memory WHERE source = 'promoted'"
        ).fetchone()
    acknowledged = lost = duplicated = unacknowledged = 0
    for op in log.ops:
        stored = stored_memories if op.tier == "memory" else stored_turns
        for marker in op.markers:
            count = stored.get(marker, 0)
            duplicated += int(count > 1)
            if op.acknowledged:
                acknowledged += 1
                lost += int(count == 0)
            else:
                unacknowledged += 1
    window = (db_fault.started, db_fault.ended + DB_DOWN_GRACE_S)
    errors: Counter[str] = Counter()
    unexpected = 0
    for failure in log.failures:
        label = f"{failure.status or 'transport'} {failure.code}"
        allowed = (
            failure.status == 503
            and failure.retry_after
            and failure.code == "database_unavailable"
            and window[0] <= failure.at <= window[1]
        )
        if failure.status == 409 and failure.code == "idempotency_key_in_progress":
            label += " (a claim the outage orphaned; retried until its lease ran out)"
        elif allowed:
            label += " while the database was down"
        else:
            unexpected += 1
        errors[label] += 1
    return {
        "acknowledged_writes": acknowledged,
        "unacknowledged_writes": unacknowledged,
        "lost": lost,
        "duplicated": duplicated,
        "errors": dict(sorted(errors.items())),
        "unexpected_errors": unexpected,
        "ops_given_up": sum(1 for op in log.ops if op.gave_up),
        "promotion_jobs": jobs,
        "promoted_memories": int(promoted[0]) if promoted else 0,
    }


def _flood_cases(run: Run) -> dict[str, Any]:
    """After the audit: the web restarted with bounds a few seconds reach, then a flood of
    each row kind (:mod:`lab.faults.floods`)."""
    run.say("flood cases: restarting the web with low bounds")
    run.stack.stop_web()
    run.stack.overrides.update(FLOOD_CASE_BOUNDS)
    run.stack.start_web()
    document = run.stack.manage_json("flood_cases", "--url", run.stack.web_url)
    # A failed run's document is the error envelope, with the figures as its details.
    floods: dict[str, Any] = document.get("error", {}).get("details") or document
    for case in floods.get("cases", []):
        run.say(
            f"flood {case['case']}: {case['requests']} requests, refused {case['refused']}; "
            f"{case['rows_stored']} rows stored of {case['rows_acknowledged']} acknowledged; "
            f"other subject changed {case['other_subject_tables_changed'] or 'nothing'}, "
            f"other tenant changed {case['other_tenant_tables_changed'] or 'nothing'}"
        )
    return {"passed": bool(floods.get("passed")), "cases": floods.get("cases", [])}


def _recover(run: Run) -> tuple[float, int, int]:
    """Seconds from the end of the last fault until every memory is embedded and no
    promotion job is in flight (or the deadline)."""
    last_fault = max(fault.ended for fault in run.faults)
    deadline = time.monotonic() + RECOVERY_DEADLINE_S
    pending = stuck = -1
    while time.monotonic() < deadline:
        try:
            pending = _scalar(
                run.stack, "SELECT count(*) FROM memory_memory WHERE embedding IS NULL"
            )
            stuck = _scalar(
                run.stack,
                "SELECT count(*) FROM memory_promotionjob WHERE status IN ('queued', 'running')",
            )
        except Exception:
            time.sleep(1)
            continue
        if pending == 0 and stuck == 0:
            break
        time.sleep(1)
    return round(time.monotonic() - last_fault, 1), pending, stuck


def _say_log_tail(log: Path, say: Callable[[str], None], lines: int = 40) -> None:
    """A failed run's scratch directory is removed: keep the worker's last words in the output."""
    if log.exists():
        say(f"last {lines} lines of {log.name}:")
        for line in log.read_text(errors="replace").splitlines()[-lines:]:
            say(f"  {line}")


def run_fault_suite(
    *, clients: int = 4, keep: bool = False, say: Callable[[str], None] = print
) -> dict[str, Any]:
    started = time.monotonic()
    stack = Stack(keep=keep)
    say(f"stack under {stack.root}")
    try:
        stack.start()
        run = Run(stack=stack, clients=clients, say=say)
        run.tenant_id, keys, peer_key = _setup_tenant(stack, clients)
        _wait_ready(stack, keys[0])
        mcp = _anonymous_mcp(run, own_key=keys[0], peer_key=peer_key)
        say("stack ready; load starts")
        stop_load, stop_beat = threading.Event(), threading.Event()
        log = ClientLog()
        beat = Beat(stack, stop_beat)
        beat.start()
        workers = [
            Client(index=i, base_url=stack.web_url, key=key, stop=stop_load, log=log)
            for i, key in enumerate(keys)
        ]
        for worker in workers:
            worker.start()
        run.t0 = time.monotonic()
        time.sleep(5)
        _kill_worker_mid_job(run)
        time.sleep(5)
        _stop_broker(run, 8)
        time.sleep(5)
        _fail_provider(run, 8)
        time.sleep(5)
        db_fault = _restart_postgres(run, 6)
        time.sleep(8)
        stop_load.set()
        for worker in workers:
            worker.join(timeout=180)
        say(f"load stopped after {log.requests} requests; waiting for recovery")
        recover_s, pending, stuck = _recover(run)
        worker_exit = stack.worker.poll() if stack.worker is not None else None
        stop_beat.set()
        beat.join(timeout=10)
        audit = _audit(run, log, db_fault)
        floods = _flood_cases(run)
        kinds = Counter(op.kind for op in log.ops)
        report = {
            "requests": log.requests,
            "operations": dict(sorted(kinds.items())),
            **audit,
            "pending_embeddings": pending,
            "stuck_jobs": stuck,
            "seconds_to_recover": recover_s,
            # The worker started after the SIGKILL must live through every later fault.
            "worker_exit_code": worker_exit,
            "faults": [
                {
                    "fault": fault.name,
                    "at_s": round(fault.started - run.t0, 1),
                    "lasted_s": round(fault.ended - fault.started, 1),
                    **({"note": fault.note} if fault.note else {}),
                }
                for fault in run.faults
            ],
            "provider_calls": stack.embeddings.calls,
            "provider_failed_calls": stack.embeddings.failed_calls,
            "beat_messages": beat.sent,
            "mcp_anonymous": mcp,
            "floods": floods,
        }
        report["passed"] = (
            report["lost"] == 0
            and report["duplicated"] == 0
            and report["stuck_jobs"] == 0
            and report["pending_embeddings"] == 0
            and report["worker_exit_code"] is None
            and report["unexpected_errors"] == 0
            and report["ops_given_up"] == 0
            and mcp["passed"]
            and floods["passed"]
        )
        report["elapsed_s"] = round(time.monotonic() - started, 1)
        if not report["passed"]:
            _say_log_tail(stack.root / "worker.log", say)
        return report
    finally:
        stack.close()
