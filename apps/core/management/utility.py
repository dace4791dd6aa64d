"""``manage.py``'s entry point: Django's, with a help page that lists Engram's commands.

``manage.py help`` (and ``manage.py`` alone) list the operator commands grouped by Engram's
apps, each with its one-line purpose; Django's own commands (``migrate``, ``shell``, and ones an
Engram deployment has no use for, such as ``flush`` or ``createsuperuser``) are listed only by
``manage.py help --all``. Everything else (``help <command>``, ``help --commands`` for shell
completion, running a command) is Django's.
"""

from __future__ import annotations

from collections import defaultdict

from django.core.management import ManagementUtility, get_commands, load_command_class
from django.core.management.color import color_style
from typing_extensions import override

#: Engram's apps, in the order the help page lists them, with what their commands are for.
ENGRAM_APPS = {
    "apps.tenancy": "tenants, API keys, providers, custody halts",
    "apps.dataops": "oversight, erasure, statistics, export and import, re-embedding",
    "apps.knowledge": "the knowledge wiki's export and import",
    "apps.core": "the embedded database and beat's schedule",
    "lab": "benchmarks and evaluations (development and test settings only)",
}


class EngramManagementUtility(ManagementUtility):
    @override
    def main_help_text(self, commands_only: bool = False) -> str:
        if commands_only or "--all" in self.argv[2:] or self.settings_exception is not None:
            text: str = super().main_help_text(commands_only=commands_only)
            return text
        by_app: dict[str, list[str]] = defaultdict(list)
        for name, app in get_commands().items():
            if app in ENGRAM_APPS:
                by_app[app].append(name)
        style = color_style()
        lines = [
            "",
            f"Engram's commands. Type '{self.prog_name} help <command>' for one command's options.",
        ]
        for app, purpose in ENGRAM_APPS.items():
            if not by_app[app]:
                continue
            lines += ["", style.NOTICE(f"[{app.rpartition('.')[-1]}]") + f"  {purpose}"]
            for name in sorted(by_app[app]):
                lines.append(f"    {name:<26}{_summary(app, name)}")
        lines += [
            "",
            f"Django's own commands (migrate, check, shell, ...): '{self.prog_name} help --all'.",
        ]
        return "\n".join(lines)


def _summary(app: str, name: str) -> str:
    """The first sentence of a command's help."""
    text = " ".join(str(load_command_class(app, name).help).split())
    sentence, _, _ = text.partition(". ")
    sentence = sentence.rstrip(".")
    if len(sentence) <= SUMMARY_CHARS:
        return sentence
    return f"{sentence[: SUMMARY_CHARS - 1].rsplit(' ', 1)[0]} …"


#: A summary fits a 100-column terminal beside its command's name.
SUMMARY_CHARS = 70


def execute_from_command_line(argv: list[str]) -> None:
    EngramManagementUtility(argv).execute()
