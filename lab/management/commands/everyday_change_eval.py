"""``everyday_change_eval``: everyday fact changes, written and recalled as a client would.

    manage.py everyday_change_eval [--cases lab/eval_data/everyday_changes.json] [--json]

Per change: the newer fact first without ``as_of``, the older first ``as_of`` a date between
them, and whether the change detector retired the older memory; per look-alike that is not a
change, whether the older memory was kept (``lab/everyday_changes.py``). The cases were written
by the team; docs/benchmarks/fact-changes.md has the figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from lab import everyday_changes


class Command(EngramCommand):
    help = "Everyday fact changes: newer first, as_of older first, what was retired."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cases",
            type=Path,
            default=everyday_changes.DEFAULT_PATH,
            help="The cases (JSON; default: the lab's own file).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["cases"]
        if not path.is_file():
            raise CommandError(f"no cases at {path}")
        changes, unchanged = everyday_changes.load_cases(path)
        data = everyday_changes.run(changes, unchanged)
        self.render(options, data, _human(data))


def _human(data: dict[str, Any]) -> str:
    lines = [
        f"everyday_change_eval: {data['changes']} changes, {data['unchanged']} look-alikes, "
        f"{data['seconds']} s",
        f"  newer fact first {data['newer_first']}/{data['changes']}, "
        f"older fact first as_of between {data['older_first_as_of']}/{data['changes']}, "
        f"both {data['both']}/{data['changes']}, retired by the detector "
        f"{data['retired']}/{data['changes']}",
        f"  look-alikes kept {data['unchanged_kept']}/{data['unchanged']}",
    ]
    for change in data["per_change"]:
        marks = "".join(
            mark if change[key] else "-"
            for key, mark in (("newer_first", "N"), ("older_first_as_of", "A"), ("retired", "R"))
        )
        lines.append(f"    {marks} {change['old']} -> {change['new']}")
    for case in data["per_unchanged"]:
        lines.append(f"    {'kept' if case['kept'] else 'RETIRED'} {case['old']} -> {case['new']}")
    return "\n".join(lines)
