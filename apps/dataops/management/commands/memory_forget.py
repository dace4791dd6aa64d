import uuid
from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.memory.selectors import memory_provenance
from apps.memory.services import memory_forget_any
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = (
        "Operator oversight: forget any memory of a tenant (its superseded history and the "
        "articles graduated from it too). Asks first, showing the memory (--yes does not)."
    )
    destructive = True

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("memory_id", help="The memory's id (as memory_list shows it).")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        try:
            memory_id = uuid.UUID(options["memory_id"])
        except ValueError as exc:
            raise CommandFailed(
                "invalid_memory_id", f"{options['memory_id']!r} is not a memory id."
            ) from exc
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        if not options["yes"]:
            memory = memory_provenance(tenant=tenant, subject_id=None, memory_id=memory_id).memory
            self.confirm(
                options,
                f"Forget memory {memory_id} of subject {memory.subject_id!r} in tenant "
                f"{tenant.slug} ({_excerpt(memory.text)!r}), its superseded versions and the "
                "articles graduated from them? This cannot be undone.",
            )
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


def _excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
