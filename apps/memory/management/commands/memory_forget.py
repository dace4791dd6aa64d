import uuid
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.memory.services import memory_forget_any
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Operator oversight: forget any memory of a tenant (and its superseded history)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("memory_id")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        try:
            memory_id = uuid.UUID(options["memory_id"])
        except ValueError as exc:
            raise CommandError(f"{options['memory_id']!r} is not a memory id.") from exc
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        deleted = memory_forget_any(tenant=tenant, memory_id=memory_id)
        self.render(
            options,
            {"memory_id": str(memory_id), "deleted_rows": deleted},
            f"Forgot {memory_id} ({deleted} row(s) including superseded versions)",
        )
