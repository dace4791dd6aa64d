"""Base for operator commands: ``--json`` output and domain errors as clean non-zero exits."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from typing_extensions import override

from apps.core.exceptions import ApplicationError


class EngramCommand(BaseCommand):
    @override
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print one JSON document.")
        self.add_command_arguments(parser)

    def add_command_arguments(self, parser: CommandParser) -> None:
        """Subclasses add their own arguments here."""

    @override
    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except ApplicationError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc

    def render(self, options: dict[str, Any], data: Any, human: str) -> None:
        if options.get("json"):
            self.stdout.write(json.dumps(data, default=str, indent=2, sort_keys=True))
        else:
            self.stdout.write(human)
