"""``profile_history_eval``: a single user's assistant history, promoted unattended, then asked
what holds now (job, home, partner, diet).

    manage.py profile_history_eval [--history lab/eval_data/profile_history.json] [--json]

Per question: the rank of the current value among the five hits and whether a stale value is
among them (``lab/profile_history.py``). The history was written by the team;
docs/benchmarks/fact-changes.md has the figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from lab import profile_history


class Command(EngramCommand):
    help = "A user's promoted history asked what holds now: the current value first?"

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--history",
            type=Path,
            default=profile_history.DEFAULT_PATH,
            help="The history (JSON; default: the lab's own file).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["history"]
        if not path.is_file():
            raise CommandError(f"no history at {path}")
        data = profile_history.run(profile_history.load_history(path))
        self.render(options, data, _human(data))


def _human(data: dict[str, Any]) -> str:
    lines = [
        f"profile_history_eval: {data['sessions']} sessions promoted, {data['seconds']} s",
        f"  current value first {data['current_first']}/{data['questions']}, "
        f"in the top five {data['current_in_top']}/{data['questions']}, "
        f"a stale value in the top five {data['stale_in_top']}/{data['questions']}",
    ]
    for item in data["per_question"]:
        lines.append(
            f"    {item['question']} current at {item['current_rank']}, "
            f"stale at {item['stale_rank']}"
        )
        lines.extend(f"      - {text}" for text in item["hits"])
    return "\n".join(lines)
