import uuid
from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.memory.services import memory_forget_any
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = (
        "Operator oversight: forget any memory of a tenant (its superseded history and the "
        "articles graduated from it too)."
    )

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
        result = memory_forget_any(tenant=tenant, memory_id=memory_id)
        deleted = result.memories_deleted
        self.render(
            options,
            {
                "memory_id": str(memory_id),
                "deleted_rows": deleted,
                "articles_deleted": [str(pk) for pk in result.articles_deleted],
            },
            f"Forgot {memory_id} ({deleted} row(s) including superseded versions, "
            f"{len(result.articles_deleted)} graduated article(s) deleted)",
        )
