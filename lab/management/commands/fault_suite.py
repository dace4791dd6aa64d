import json
import logging
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from lab.faults.suite import run_fault_suite


class Command(EngramCommand):
    help = (
        "Fault injection against real processes (web, worker, Postgres, Redis, a fake "
        "embedding provider) under concurrent load, then an audit. Fails on any loss, "
        "duplicate, stuck job, unembedded memory or unexpected error."
    )

    # Needs no deployment database: it starts its own processes (or only embeds).
    uses_database = False

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--clients", type=int, default=4, help="Concurrent clients writing and recalling."
        )
        parser.add_argument(
            "--keep", action="store_true", help="Keep the scratch directory (logs) afterwards."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("httpx").setLevel(logging.WARNING)
        report = run_fault_suite(
            clients=options["clients"],
            keep=options["keep"],
            say=lambda line: self.stderr.write(f"fault_suite: {line}"),
        )
        if not report["passed"]:
            # Under --json the figures are the error's details: one document either way.
            if not options["json"]:
                self._print_figures(report)
            raise CommandFailed(
                "fault_suite_failed", "fault suite failed (see the figures)", details=report
            )
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
        else:
            self._print_figures(report)

    def _print_figures(self, report: dict[str, Any]) -> None:
        for name, value in report.items():
            self.stdout.write(f"{name:24} {value}")
