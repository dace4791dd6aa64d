"""``flood_bench``: one agent floods, another of the same tenant recalls; its latency alone and
beside the flood.

    manage.py flood_bench [--url http://127.0.0.1:8000 | --serve] [--seconds 60]
                          [--quiet-seconds 30] [--connections 8] [--quiet-rate 5]
                          [--memories 200] [--repeat 1] [--json]

Run it with the same settings (and data directory) as the server under test: it seeds its own
tenant in that database, then talks to the server over HTTP only. ``--serve`` starts
``scripts/run.sh`` (the ``make run`` topology) on a free port for the run instead.
docs/benchmarks/flood.md has the figures and how they were taken.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from config.env import data_dir
from lab import flood_bench
from lab.load_bench import LoadBenchRefused


class Command(EngramCommand):
    help = (
        "One agent floods (session turns, articles, recalls, context searches, promotions) "
        "while another of its tenant recalls: that agent's p50/p99 alone and under the flood, "
        "and what the flooder was refused."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="Loopback only.")
        parser.add_argument(
            "--serve",
            action="store_true",
            help="Start scripts/run.sh on a free port for the run (ignores --url).",
        )
        parser.add_argument("--seconds", type=float, default=60.0, help="How long to flood.")
        parser.add_argument(
            "--quiet-seconds",
            type=float,
            default=30.0,
            help="How long the quiet agent recalls alone first (its baseline).",
        )
        parser.add_argument(
            "--connections", type=int, default=8, help="The flooder's concurrent connections."
        )
        parser.add_argument(
            "--quiet-rate", type=float, default=5.0, help="The quiet agent's recalls per second."
        )
        parser.add_argument(
            "--memories", type=int, default=200, help="Embedded memories seeded per agent."
        )
        parser.add_argument(
            "--repeat",
            type=int,
            default=1,
            help="Runs against the same server (each seeds its own tenant); prints the medians.",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("httpx").setLevel(logging.WARNING)
        try:
            plan = flood_bench.validate(
                flood_bench.FloodPlan(
                    url=options["url"],
                    seconds=options["seconds"],
                    quiet_seconds=options["quiet_seconds"],
                    connections=options["connections"],
                    quiet_rate=options["quiet_rate"],
                )
            )
        except LoadBenchRefused as exc:
            raise CommandError(str(exc)) from exc
        if options["memories"] < 1:
            raise CommandError("--memories must be at least 1")
        if not 1 <= options["repeat"] <= MAX_REPEAT:
            raise CommandError(f"--repeat must be between 1 and {MAX_REPEAT}")
        if options["serve"]:
            log = data_dir() / "flood_bench_server.log"
            with flood_bench.served(
                log=log, say=lambda line: self.stderr.write(f"flood_bench: {line}")
            ) as url:
                plan = flood_bench.FloodPlan(**{**plan.__dict__, "url": url})
                report = _bench(plan, options)
        else:
            report = _bench(plan, options)
        self.render(options, report, _human(report))


MAX_REPEAT = 20


def _bench(plan: flood_bench.FloodPlan, options: dict[str, Any]) -> dict[str, Any]:
    if options["repeat"] == 1:
        return flood_bench.flood_bench(plan=plan, memories_per_agent=options["memories"])
    return flood_bench.flood_bench_repeated(
        plan=plan, memories_per_agent=options["memories"], repeat=options["repeat"]
    )


def _human(report: dict[str, Any]) -> str:
    if "runs" not in report:
        return _human_run(report)
    verdict = "within" if report["within_target"] else "NOT within"
    return "\n\n".join(
        [
            *(f"run {number}: " + _human_run(run) for number, run in enumerate(report["runs"], 1)),
            f"median of {len(report['runs'])} runs: p50 ratio {report['p50_ratio_median']}x  "
            f"p99 ratio {report['p99_ratio_median']}x  "
            f"({verdict} {flood_bench.TARGET_P99_RATIO:g}x)",
        ]
    )


def _human_run(report: dict[str, Any]) -> str:
    alone, flooded = report["quiet_alone"], report["quiet_under_flood"]
    verdict = "within" if report["within_target"] else "NOT within"
    lines = [
        f"flood_bench against {report['url']}: quiet agent {report['quiet_rate']} recalls/s, "
        f"{report['quiet_seconds']} s alone then {report['seconds']} s beside a flood on "
        f"{report['connections']} connections",
        f"  quiet alone        p50 {alone['p50_ms']} ms  p99 {alone['p99_ms']} ms  "
        f"({alone['requests']} recalls, statuses {alone['statuses']})",
        f"  quiet under flood  p50 {flooded['p50_ms']} ms  p99 {flooded['p99_ms']} ms  "
        f"({flooded['requests']} recalls, statuses {flooded['statuses']})",
        f"  ratio              p50 {report['p50_ratio']}x  p99 {report['p99_ratio']}x  "
        f"({verdict} {flood_bench.TARGET_P99_RATIO:g}x)",
        f"  flooder: {report['flood_requests']} requests",
    ]
    for name, figures in report["flood"].items():
        lines.append(
            f"    {name:<13} {figures['ok']:>6} ok  refused {report['flood_refused'][name]}"
        )
    machine = report.get("machine_under_flood")
    if machine:
        lines.append(f"  machine under flood: {machine['busy_share']:.0%} busy")
    by_process = report.get("cpu_ms_per_request_by_process")
    if by_process:
        lines.append(
            "  CPU ms per request by process: "
            + ", ".join(f"{role} {ms}" for role, ms in by_process.items())
        )
    return "\n".join(lines)
