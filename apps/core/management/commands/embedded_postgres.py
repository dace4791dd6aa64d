from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from typing_extensions import override

from apps.core.embedded_postgres import stop_embedded_postgres


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL (used when DATABASE_URL is not set)."

    @override
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "stop"])

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        pgdata = settings.EMBEDDED_POSTGRES_DIR
        if pgdata is None:
            raise CommandError("DATABASE_URL is set; no embedded server is in use.")
        if options["action"] == "stop":
            stopped = stop_embedded_postgres(pgdata)
            self.stdout.write("stopped" if stopped else "not running")
        else:
            self.stdout.write(f"running at {pgdata}")
