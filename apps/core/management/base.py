"""Base for operator commands: ``--json`` output, coded errors, and confirmation of what
cannot be undone.

- With ``--json`` a command prints one JSON document on stdout, and so does a failure: ``{"error":
  {"code", "message", "details"}}`` (the API's envelope), with exit status 1 (2 for arguments
  the parser refuses). Without it a failure is one line on stderr, ``CommandError: <code>:
  <message>``.
- Every refusal carries a stable code: domain errors (:class:`ApplicationError`) keep theirs,
  and commands raise :class:`CommandFailed` for their own.
- A ``destructive`` command asks before it deletes: ``--yes`` (or ``--no-input``) answers for the
  operator, and without a terminal to ask on the command refuses unless given.
- A command that ``uses_database`` never creates an embedded database: without a cluster at
  ``$ENGRAM_DATA_DIR/pg`` (a forgotten ``ENGRAM_DATA_DIR``, most often) it refuses in one line
  before anything starts, and so it does on a database that was never migrated.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import IO, Any, NoReturn

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import (
    BaseCommand,
    CommandError,
    CommandParser,
    handle_default_options,
)
from django.db import ProgrammingError, connections
from typing_extensions import override

from apps.core.embedded_postgres import EmbeddedPostgresError
from apps.core.exceptions import ApplicationError

#: A CommandError raised without a code of its own (Django's, or a bare one) reports this one.
UNCODED = "command_failed"
#: The parser refused the arguments: a missing or unknown option, a bad value.
INVALID_ARGUMENTS = "invalid_arguments"
#: Anything else that went wrong; ``--traceback`` shows where.
INTERNAL_ERROR = "internal_error"
#: Without ``--yes``, a destructive command needs a terminal to ask on.
CONFIRMATION_REQUIRED = "confirmation_required"
#: The operator answered anything but ``yes``.
NOT_CONFIRMED = "not_confirmed"
#: No embedded cluster at the data dir: the command would have created an empty one.
EMBEDDED_DATABASE_MISSING = "embedded_database_missing"
#: The embedded server would not start (its log's last line says why).
EMBEDDED_DATABASE_UNAVAILABLE = "embedded_database_unavailable"
#: The database answers but holds no Engram tables.
DATABASE_NOT_MIGRATED = "database_not_migrated"


class CommandFailed(CommandError):
    """A command's refusal with a stable ``code``, printed as ``<code>: <message>`` (or as
    the JSON error document under ``--json``)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        returncode: int = 1,
    ) -> None:
        super().__init__(f"{code}: {message}", returncode=returncode)
        self.code = code
        self.message = message
        self.details = details or {}


def error_document(exc: BaseException) -> dict[str, Any]:
    """``{"error": {"code", "message", "details"}}`` for any failure of a command."""
    if isinstance(exc, CommandFailed):
        code, message, details = exc.code, exc.message, exc.details
    elif isinstance(exc, CommandError):
        code, message, details = UNCODED, str(exc), {}
    else:
        code, message, details = INTERNAL_ERROR, f"{type(exc).__name__}: {exc}", {}
    return {"error": {"code": code, "message": message, "details": details}}


class EngramCommand(BaseCommand):
    #: Deletes or revokes what cannot be restored: asks first, unless ``--yes``.
    destructive = False
    #: Reads or writes the deployment's database (most do; a command that does not is not
    #: refused for a missing embedded database).
    uses_database = True
    # ``stdin`` may be handed in like ``stdout`` (call_command), for the confirmation prompt.
    stealth_options = ("stdin",)

    @override
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print one JSON document; a failure too, as {"error": {"code", "message", '
            '"details"}}.',
        )
        if self.destructive:
            parser.add_argument(
                "--yes",
                "--no-input",
                "--noinput",
                dest="yes",
                action="store_true",
                help="Do not ask for confirmation; required when no terminal is attached.",
            )
        self.add_command_arguments(parser)

    def add_command_arguments(self, parser: CommandParser) -> None:
        """Subclasses add their own arguments here."""

    @override
    def execute(self, *args: Any, **options: Any) -> str | None:
        self.stdin: IO[str] = options.pop("stdin", None) or sys.stdin
        if self.uses_database:
            _refuse_a_missing_embedded_database()
        try:
            return super().execute(*args, **options)
        except ApplicationError as exc:
            raise CommandFailed(str(exc.code), exc.message, details=dict(exc.details)) from exc
        except EmbeddedPostgresError as exc:
            raise CommandFailed(EMBEDDED_DATABASE_UNAVAILABLE, str(exc)) from exc
        except ProgrammingError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != UNDEFINED_TABLE:
                raise
            database = settings.DATABASES["default"]
            raise CommandFailed(
                DATABASE_NOT_MIGRATED,
                f"The database {database.get('NAME')!r} has no Engram tables: is this the "
                "server's ENGRAM_DATA_DIR (or DATABASE_URL)? `manage.py migrate` creates them.",
            ) from exc

    @override
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        if getattr(self, "_json_errors", False):
            _refuse_arguments_as_json(parser)
        return parser

    @override
    def run_from_argv(self, argv: list[str]) -> None:
        """Django's, with every failure printed as one line, or one JSON document under
        ``--json`` (unexpected errors too; ``--traceback`` raises them instead)."""
        self._json_errors = "--json" in argv[2:]
        self._called_from_command_line = True
        traceback = "--traceback" in argv[2:]
        try:
            parser = self.create_parser(argv[0], argv[1])
            options = parser.parse_args(argv[2:])
            cmd_options = vars(options)
            args = cmd_options.pop("args", ())
            handle_default_options(options)
            self.execute(*args, **cmd_options)
        except CommandError as exc:
            if traceback:
                raise
            self._fail(exc, exc.returncode)
        except Exception as exc:
            if traceback or not self._json_errors:
                raise
            self._fail(exc, 1)
        finally:
            # As Django's own: connections may not be configured at this point.
            with contextlib.suppress(ImproperlyConfigured):
                connections.close_all()

    def _fail(self, exc: BaseException, returncode: int) -> NoReturn:
        if self._json_errors:
            self.stdout.write(json.dumps(error_document(exc), default=str, sort_keys=True))
        else:
            self.stderr.write(f"CommandError: {exc}")
        sys.exit(returncode)

    def confirm(self, options: dict[str, Any], action: str) -> None:
        """Ask the operator to confirm ``action`` (one sentence saying what will be lost)
        before anything is changed; return only on ``yes``."""
        if options.get("yes"):
            return
        if not _is_terminal(self.stdin):
            raise CommandFailed(
                CONFIRMATION_REQUIRED,
                f"{action} Nothing was changed: no terminal to confirm on; pass --yes.",
            )
        self.stderr.write(f"{action} Type 'yes' to continue: ", ending="")
        self.stderr.flush()
        answer = self.stdin.readline().strip().lower()
        if answer != "yes":
            raise CommandFailed(NOT_CONFIRMED, "Not confirmed; nothing was changed.")

    def render(self, options: dict[str, Any], data: Any, human: str) -> None:
        if options.get("json"):
            self.stdout.write(json.dumps(data, default=str, indent=2, sort_keys=True))
        else:
            self.stdout.write(human)


#: PostgreSQL's SQLSTATE for a missing table.
UNDEFINED_TABLE = "42P01"


def _refuse_a_missing_embedded_database() -> None:
    pgdata = getattr(settings, "EMBEDDED_POSTGRES_DIR", None)
    if pgdata is None or (Path(pgdata) / "PG_VERSION").exists():
        return
    raise CommandFailed(
        EMBEDDED_DATABASE_MISSING,
        f"No embedded database at {pgdata}, and this command does not create one: set "
        "ENGRAM_DATA_DIR to the server's data dir (or DATABASE_URL to its database), or run "
        "`make run` (or `manage.py migrate`) to create one here.",
    )


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _refuse_arguments_as_json(parser: CommandParser) -> None:
    """Make ``parser`` (and its subcommands' parsers) raise a coded failure instead of
    printing usage and exiting, so ``--json`` gets a JSON document for bad arguments too."""

    def error(message: str) -> NoReturn:
        raise CommandFailed(INVALID_ARGUMENTS, message, returncode=2)

    parser.error = error  # type: ignore[method-assign]
    for action in parser._actions:
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict):
            for subparser in choices.values():
                if isinstance(subparser, CommandParser):
                    _refuse_arguments_as_json(subparser)
