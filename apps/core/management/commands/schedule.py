"""Inspect and change beat's schedule (django-celery-beat's tables) without an admin site.

manage.py schedule list [--json]
manage.py schedule set NAME --every SECONDS [--json]
manage.py schedule enable NAME | disable NAME [--json]
manage.py schedule run NAME [--json]      # send it to a worker now
manage.py schedule seed [--json]          # what `migrate` already does
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.core.schedules import (
    ScheduledTask,
    schedule_get,
    schedule_list,
    schedule_run,
    schedule_seed,
    schedule_set_enabled,
    schedule_set_interval,
)

JSON_HELP = 'Print one JSON document; a failure too, as {"error": {"code", "message", "details"}}.'
NAME_HELP = "The periodic task's name, as `schedule list` shows it."


class Command(EngramCommand):
    help = "List, change, enable/disable or run beat's periodic tasks (stored in the database)."

    @override
    def add_arguments(self, parser: CommandParser) -> None:
        # `--json` belongs to each action (`schedule list --json`), not to the command.
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="every periodic task").add_argument(
            "--json", action="store_true", help=JSON_HELP
        )
        actions.add_parser("seed", help="add the code's schedule").add_argument(
            "--json", action="store_true", help=JSON_HELP
        )
        set_parser = actions.add_parser("set", help="change a task's interval")
        set_parser.add_argument("name", help=NAME_HELP)
        set_parser.add_argument(
            "--every",
            type=int,
            required=True,
            metavar="SECONDS",
            help="Run it every this many seconds.",
        )
        set_parser.add_argument("--json", action="store_true", help=JSON_HELP)
        for action, what in (
            ("enable", "let beat run a task again"),
            ("disable", "stop beat from running a task"),
            ("run", "send a task to a worker now"),
        ):
            sub = actions.add_parser(action, help=what)
            sub.add_argument("name", help=NAME_HELP)
            sub.add_argument("--json", action="store_true", help=JSON_HELP)

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        action, as_json = options["action"], options["json"]
        if action == "list":
            tasks = schedule_list()
            if as_json:
                self._json({"tasks": [task.as_dict() for task in tasks]})
            else:
                for task in tasks:
                    self._line(task)
            return
        if action == "seed":
            outcome = schedule_seed()
            if as_json:
                self._json({"seeded": outcome})
            else:
                for name, what in outcome.items():
                    self.stdout.write(f"{name}: {what}")
            return
        name = options["name"]
        if action == "run":
            task = schedule_get(name=name)
            task_id = schedule_run(name=name)
            if as_json:
                self._json({"name": name, "task": task.task, "task_id": task_id})
            else:
                self.stdout.write(f"{name}: sent {task.task} as {task_id}")
            return
        if action == "set":
            task = schedule_set_interval(name=name, every_seconds=options["every"])
        else:
            task = schedule_set_enabled(name=name, enabled=action == "enable")
        if as_json:
            self._json(task.as_dict())
        else:
            self._line(task)

    def _line(self, task: ScheduledTask) -> None:
        every = f"every {task.every_seconds}s" if task.every_seconds is not None else "custom"
        state = "enabled" if task.enabled else "disabled"
        self.stdout.write(
            f"{task.name:<36} {task.task:<36} {every:<14} {state:<8} "
            f"runs={task.total_run_count} last={task.last_run_at or '-'}"
        )

    def _json(self, payload: object) -> None:
        self.stdout.write(json.dumps(payload, sort_keys=True))
