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

from django.core.management.base import BaseCommand, CommandError, CommandParser
from typing_extensions import override

from apps.core.exceptions import ApplicationError
from apps.core.schedules import (
    ScheduledTask,
    schedule_get,
    schedule_list,
    schedule_run,
    schedule_seed,
    schedule_set_enabled,
    schedule_set_interval,
)


class Command(BaseCommand):
    help = "List, change, enable/disable or run beat's periodic tasks (stored in the database)."

    @override
    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        actions.add_parser("list", help="every periodic task").add_argument(
            "--json", action="store_true"
        )
        actions.add_parser("seed", help="add the code's schedule").add_argument(
            "--json", action="store_true"
        )
        set_parser = actions.add_parser("set", help="change a task's interval")
        set_parser.add_argument("name")
        set_parser.add_argument("--every", type=int, required=True, metavar="SECONDS")
        set_parser.add_argument("--json", action="store_true")
        for action in ("enable", "disable", "run"):
            sub = actions.add_parser(action)
            sub.add_argument("name")
            sub.add_argument("--json", action="store_true")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self._handle(options)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc

    def _handle(self, options: dict[str, Any]) -> None:
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
