from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from apps.memory.models import Memory
from apps.memory.selectors import memory_list, memory_list_all_subjects
from apps.tenancy.selectors import tenant_get_by_slug_or_id


def memory_summary(memory: Memory) -> dict[str, Any]:
    return {
        "id": str(memory.pk),
        "subject_id": memory.subject_id,
        "text": memory.text,
        "source": memory.source,
        "project_id": str(memory.project_id) if memory.project_id else None,
        "tags": memory.tags,
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
        "embedding_status": "ready" if memory.embedded_at else "pending",
        "recall_count": memory.recall_count,
        "created_at": memory.created_at.isoformat(),
    }


class Command(EngramCommand):
    help = "Operator oversight: list a tenant's memories (one subject or all subjects)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("--subject", help="Only this subject's memories.")
        parser.add_argument(
            "--all-subjects", action="store_true", help="Every subject of the tenant."
        )
        parser.add_argument(
            "--include-superseded",
            action="store_true",
            help="Also list versions a newer memory replaced.",
        )
        parser.add_argument("--limit", type=int, default=50, help="Rows per page.")
        parser.add_argument("--offset", type=int, default=0, help="Rows to skip.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if bool(options["subject"]) == bool(options["all_subjects"]):
            raise CommandFailed(
                INVALID_ARGUMENTS, "Give exactly one of --subject or --all-subjects."
            )
        if options["limit"] < 1:
            raise CommandFailed(INVALID_ARGUMENTS, "--limit must be positive.")
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        common = {
            "include_superseded": options["include_superseded"],
            "limit": options["limit"],
            "offset": options["offset"],
        }
        if options["all_subjects"]:
            page = memory_list_all_subjects(tenant=tenant, **common)
        else:
            page = memory_list(tenant=tenant, subject_id=options["subject"], **common)
        rows = [memory_summary(memory) for memory in page.results]
        lines = [f"{r['id']}  {r['subject_id']:<24} {r['text'][:80]}" for r in rows]
        lines.append(f"({len(rows)} of {page.total_count})")
        self.render(options, {"results": rows, "meta": page.meta}, "\n".join(lines))
