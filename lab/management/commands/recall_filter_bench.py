"""``recall_filter_bench``: what tag and metadata filters cost recall and list.

    manage.py recall_filter_bench [--rows 3000] [--wanted-every 600] [--runs 9] [--json]
                                  [--in-place]

Runs in a scratch database of its own (created, migrated and dropped: ``lab.scratch``) unless
``--in-place`` is given, on a tenant of its own. Figures: docs/benchmarks/recall-filters.md.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from lab.recall_filter_bench import recall_filter_bench_run
from lab.scratch import scratch_database


class Command(EngramCommand):
    help = (
        "Measure tag and metadata filters on recall and list: the scope's plan (index, "
        "buffers, time) and median recall/list times against the unfiltered reference "
        "(figures for docs/benchmarks/recall-filters.md)."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rows", type=int, default=3000, help="Memories per subject (two).")
        parser.add_argument(
            "--wanted-every",
            type=int,
            default=600,
            help="Every Nth memory carries the filtered tag and metadata.",
        )
        parser.add_argument("--runs", type=int, default=9, help="Timed calls per median.")
        parser.add_argument(
            "--in-place",
            action="store_true",
            help="Use the configured database instead of a scratch one (adds a tenant).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if min(options["rows"], options["wanted_every"], options["runs"]) < 1:
            raise CommandFailed(
                INVALID_ARGUMENTS, "--rows, --wanted-every and --runs must be at least 1."
            )
        arguments = {
            "rows": options["rows"],
            "wanted_every": options["wanted_every"],
            "runs": options["runs"],
        }
        if options["in_place"]:
            result = recall_filter_bench_run(**arguments)
        else:
            with scratch_database():
                result = recall_filter_bench_run(**arguments)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), sort_keys=True))
            return
        self.stdout.write(
            f"{result.rows_per_subject} rows a subject, 1 in {result.wanted_every} wanted, "
            f"medians of {result.runs}"
        )
        self.stdout.write(
            f"{'filter':<15}{'rows':>6} {'plan index':<40}{'buffers':>8}{'plan ms':>9}"
            f"{'semantic':>10}{'keyword':>9}{'hybrid':>9}{'list':>8}"
        )
        for entry in result.filters:
            self.stdout.write(
                f"{entry.name:<15}{entry.matching_rows:>6} {entry.plan_index[:39]:<40}"
                f"{entry.plan_buffers:>8}{entry.plan_ms:>9.2f}"
                f"{entry.recall_ms['semantic']:>10.2f}{entry.recall_ms['keyword']:>9.2f}"
                f"{entry.recall_ms['hybrid']:>9.2f}{entry.list_ms:>8.2f}"
            )
