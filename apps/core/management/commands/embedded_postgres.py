from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.embedded_postgres import embedded_status, stop_embedded_postgres
from apps.core.management.base import CommandFailed, EngramCommand


class Command(EngramCommand):
    help = (
        "Inspect or stop the embedded PostgreSQL under $ENGRAM_DATA_DIR/pg (used when "
        "DATABASE_URL is not set). Neither action starts it."
    )
    uses_database = False

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "action",
            choices=["status", "stop"],
            help="status: whether it runs, its pid, socket and port; stop: a fast shutdown.",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        pgdata = settings.EMBEDDED_POSTGRES_DIR
        if pgdata is None:
            raise CommandFailed(
                "embedded_database_not_in_use", "DATABASE_URL is set; no embedded server is in use."
            )
        if options["action"] == "stop":
            stopped = stop_embedded_postgres(pgdata)
            self.render(
                options,
                {"pgdata": str(pgdata), "stopped": stopped},
                "stopped" if stopped else "not running",
            )
            return
        status = embedded_status(pgdata)
        if status.running:
            human = f"running at {pgdata} (pid {status.pid}, socket {status.socket_dir}, port "
            human += f"{status.port})"
        elif status.initialised:
            human = f"not running ({pgdata})"
        else:
            human = f"no database at {pgdata}"
        self.render(options, status.as_dict(), human)
