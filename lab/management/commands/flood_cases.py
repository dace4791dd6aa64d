"""``flood_cases``: floods of each kind of row one key can create, against a running server,
each checked for what was refused and that no other subject or tenant changed.

    manage.py flood_cases --url http://127.0.0.1:8000 [--seconds 3] [--connections 6] [--json]

Run it with the server's settings and data directory (it creates two throwaway tenants in
that database and compares rows there), against a server started with low bounds
(lab.faults.floods.FLOOD_CASE_BOUNDS). ``make fault-suite`` and ``make fuzz`` run it.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from lab.faults.floods import run_flood_cases
from lab.load_bench import require_loopback


class Command(EngramCommand):
    help = (
        "Floods of session turns, memories, articles and promotions from one agent: what was "
        "refused, and that nothing of another subject or tenant changed."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="Loopback only.")
        parser.add_argument("--seconds", type=float, default=3.0, help="Each flood's length.")
        parser.add_argument(
            "--connections", type=int, default=6, help="The flooder's concurrent connections."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        report = run_flood_cases(
            url=require_loopback(options["url"]),
            seconds=options["seconds"],
            connections=options["connections"],
            say=lambda line: self.stderr.write(f"flood_cases: {line}"),
        )
        if not report["passed"]:
            raise CommandFailed("flood_cases_failed", "a flood case failed", details=report)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
        else:
            for case in report["cases"]:
                self.stdout.write(f"{case['case']:<14} passed  refused {case['refused']}")
