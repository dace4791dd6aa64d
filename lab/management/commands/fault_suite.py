import json
import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from typing_extensions import override

from lab.faults.suite import run_fault_suite


class Command(BaseCommand):
    help = (
        "Fault injection against real processes (web, worker, Postgres, Redis, a fake "
        "embedding provider) under concurrent load, then an audit. Fails on any loss, "
        "duplicate, stuck job, unembedded memory or unexpected error."
    )

    @override
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--clients", type=int, default=4)
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
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
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
        else:
            for name, value in report.items():
                self.stdout.write(f"{name:24} {value}")
        if not report["passed"]:
            raise CommandError("fault suite failed (see the figures above)")
