"""``load_bench``: concurrent HTTP clients against a running Engram on this machine.

    manage.py load_bench [--url http://127.0.0.1:8000] --clients 8 --seconds 15
                         --mix recall|write|mixed [--queries unique|repeat]
                         [--agents 8] [--memories 200]
                         [--max-requests N] [--json]
    manage.py load_bench --cpu-floor [--url ...] [--recalls 200] [--writes 200]
                         [--memories 300] [--repeat 3] [--json]

Run it with the same settings (and data directory) as the server under test: it seeds its own
tenant in that database, then talks to the server over HTTP only. ``--cpu-floor`` measures
instead what one recall and one write cost the service's processes in CPU, against what the
deployment's embedder costs for the same inputs (lab/cpu_floor.py). docs/benchmarks/load.md
has the figures and how they were taken.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from lab import cpu_floor, load_bench


class Command(EngramCommand):
    help = "Concurrent HTTP load (recall, single writes, or both) against a local Engram server."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="Loopback only.")
        parser.add_argument("--clients", type=int, default=8, help="Concurrent client threads.")
        parser.add_argument(
            "--seconds", type=float, default=15.0, help="How long to send requests."
        )
        parser.add_argument(
            "--mix",
            choices=load_bench.MIXES,
            default="mixed",
            help="recall: recalls only; write: single writes only; mixed: both.",
        )
        parser.add_argument(
            "--queries",
            choices=load_bench.QUERY_PATTERNS,
            default=load_bench.QUERIES_UNIQUE,
            help="unique: every recall a new text; repeat: each agent cycles its 50 topics.",
        )
        parser.add_argument("--agents", type=int, default=8, help="Agents (one key each).")
        parser.add_argument(
            "--memories",
            type=int,
            default=None,
            help="Embedded memories seeded per agent (200; 300 with --cpu-floor).",
        )
        parser.add_argument(
            "--max-requests", type=int, default=100_000, help="Stop after this many requests."
        )

        parser.add_argument(
            "--cpu-floor",
            action="store_true",
            help="One client, one agent: CPU per recall and per write over the service's "
            "processes, next to the embedding of the same inputs.",
        )
        parser.add_argument(
            "--recalls", type=int, default=cpu_floor.DEFAULT_RECALLS, help="--cpu-floor only."
        )
        parser.add_argument(
            "--writes", type=int, default=cpu_floor.DEFAULT_WRITES, help="--cpu-floor only."
        )
        parser.add_argument(
            "--repeat",
            type=int,
            default=cpu_floor.DEFAULT_REPEAT,
            help="--cpu-floor only: runs, each on a fresh tenant; the medians are printed.",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["cpu_floor"]:
            self._cpu_floor(options)
            return
        if options["memories"] is None:
            options["memories"] = 200
        try:
            plan = load_bench.validate(
                load_bench.LoadPlan(
                    url=options["url"],
                    clients=options["clients"],
                    seconds=options["seconds"],
                    mix=options["mix"],
                    max_requests=options["max_requests"],
                    queries=options["queries"],
                )
            )
        except load_bench.LoadBenchRefused as exc:
            raise CommandError(str(exc)) from exc
        if options["agents"] < 1 or options["memories"] < 1:
            raise CommandError("--agents and --memories must be at least 1")
        tenant, agents = load_bench.seed(
            agents=options["agents"], memories_per_agent=options["memories"]
        )
        try:
            report = load_bench.run(plan=plan, agents=agents)
            if "write" in report["operations"]:
                report["embedding"] = load_bench.wait_embedded(tenant=tenant)
        finally:
            removed = load_bench.remove(tenant=tenant)
        report.update(
            {
                "url": plan.url,
                "clients": plan.clients,
                "mix": plan.mix,
                "queries": plan.queries,
                "agents": len(agents),
                "memories_per_agent": options["memories"],
                "memories_removed": removed,
            }
        )
        self.render(options, report, _human(report))

    def _cpu_floor(self, options: dict[str, Any]) -> None:
        try:
            plan = cpu_floor.validate(
                cpu_floor.FloorPlan(
                    url=options["url"],
                    recalls=options["recalls"],
                    writes=options["writes"],
                    memories=options["memories"] or cpu_floor.DEFAULT_MEMORIES,
                    repeat=options["repeat"],
                )
            )
            report = cpu_floor.run(plan)
        except (cpu_floor.CpuFloorRefused, load_bench.LoadBenchRefused) as exc:
            raise CommandError(str(exc)) from exc
        self.render(options, report, floor_report_text(report))


def _human(report: dict[str, Any]) -> str:
    lines = [
        f"load_bench {report['mix']} ({report['queries']} queries) against {report['url']}: "
        f"{report['clients']} clients, "
        f"{report['seconds']} s, {report['agents']} agents x {report['memories_per_agent']} "
        "memories"
    ]
    for name, figures in report["operations"].items():
        lines.append(
            f"  {name:<6} {figures['per_s']:>7}/s  p50 {figures['p50_ms']} ms  "
            f"p95 {figures['p95_ms']} ms  p99 {figures['p99_ms']} ms  "
            f"errors {figures['errors']}  statuses {figures['statuses']}"
        )
    machine = report.get("machine")
    if machine:
        lines.append(
            f"  machine: {machine['busy_share']:.0%} busy, {machine['steal_share']:.0%} stolen, "
            f"{machine['cpu_ms_per_request']} ms of CPU per request (every process)"
        )
    embedding = report.get("embedding")
    if embedding:
        after = embedding["all_embedded_after_s"]
        landed = (
            f"all embedded {after} s later"
            if after is not None
            else f"not all embedded within {load_bench.EMBEDDED_WAIT_SECONDS:.0f} s"
        )
        lines.append(
            f"  embedding: {embedding['pending_at_stop']:,} writes without a vector when the "
            f"clock stopped; {landed}"
        )
    by_process = report.get("cpu_ms_per_request_by_process")
    if by_process:
        lines.append(
            "  CPU ms per request by process: "
            + ", ".join(f"{role} {ms}" for role, ms in by_process.items())
        )
    lines.append(f"  removed the load tenant ({report['memories_removed']:,} memories)")
    return "\n".join(lines)


def floor_report_text(report: dict[str, Any]) -> str:
    runs = report["runs"]
    lines = [
        f"load_bench --cpu-floor against {report['url']} ({report['service_directory']}): "
        f"1 client, 1 agent x {report['memories']} memories, {len(runs)} run(s); the "
        f"embedder on {report['embedding_threads']} thread(s)"
    ]
    labelled = [(f"run {n}", run) for n, run in enumerate(runs, start=1)]
    if len(runs) > 1:
        labelled.append(("median", report["median"]))
    for label, figures in labelled:
        for phase in ("recall", "write"):
            row = figures[phase]
            lines.append(
                f"  {label:<6} {phase:<6} {row['ratio']:>5}x  service {row['service_cpu_ms']} ms "
                f"of CPU, embedding {row['embedding_cpu_ms']} ms, overhead "
                f"{row['overhead_ms']} ms  ("
                + ", ".join(f"{role} {ms}" for role, ms in row["by_process"].items())
                + f"; {row['wall_ms']} ms wall)"
            )
    return "\n".join(lines)
