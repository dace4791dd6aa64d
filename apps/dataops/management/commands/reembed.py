"""``reembed``: re-embed a tenant's memories and articles with its current provider.

    manage.py reembed --tenant SLUG [--batch N] [--only-pending] [--json]
    manage.py reembed --status [--tenant SLUG] [--json]

Run it after ``configure_provider --kind embedding`` changes the tenant's model, to move it at
once rather than at the background migration's pace. Resumable: if the provider fails it
stops with a non-zero exit, keeps every batch already written, and the same command continues
where it left off (``apps.dataops.services.reembed``). ``--only-pending`` embeds only the rows
that have no vector yet. ``--status`` re-embeds nothing: it shows, per tenant, its current
model and its vectors per model, i.e. how far the background migration has come
(docs/operators.md, "Changing the embedding model").
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from apps.dataops.selectors import TenantEmbeddingModels, embedding_migration_status
from apps.dataops.services import memory_reembed
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Re-embed a tenant's memories and articles with its current embedding provider."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--tenant", help="Tenant slug or id (required unless --status, where it narrows)."
        )
        parser.add_argument(
            "--batch",
            type=int,
            default=settings.EMBEDDING_BATCH_SIZE,
            help="Texts per provider call (default: ENGRAM_EMBEDDING_BATCH_SIZE).",
        )
        parser.add_argument(
            "--only-pending", action="store_true", help="Only rows without a vector."
        )
        parser.add_argument(
            "--status",
            action="store_true",
            help="Re-embed nothing; show each tenant's vectors per model (migration progress).",
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["status"]:
            self._status(options)
            return
        if not options["tenant"]:
            raise CommandFailed(INVALID_ARGUMENTS, "--tenant is required (unless --status).")
        if options["batch"] < 1:
            raise CommandFailed(INVALID_ARGUMENTS, "--batch must be positive.")
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        with tqdm(desc="re-embedding", unit="row", file=sys.stderr, leave=False) as progress:

            def start(total: int) -> None:
                progress.reset(total=total)

            result = memory_reembed(
                tenant=tenant,
                batch_size=options["batch"],
                only_pending=options["only_pending"],
                on_total=start,
                on_progress=progress.update,
            )
        data = {
            "tenant": tenant.slug,
            "provider": result.provider,
            "run_id": str(result.run_id) if result.run_id else None,
            "resumed": result.resumed,
            "started_at": result.started_at,
            "only_pending": options["only_pending"],
            "memories": result.memories,
            "articles": result.articles,
        }
        human = (
            f"Re-embedded {result.memories} memories and {result.articles} articles of "
            f"{tenant.slug} with {result.provider}"
        )
        if result.resumed and result.started_at is not None:
            human += f" (resumed the run started {result.started_at.isoformat()})"
        self.render(options, data, human + ".")

    def _status(self, options: dict[str, Any]) -> None:
        tenant = (
            tenant_get_by_slug_or_id(identifier=options["tenant"]) if options["tenant"] else None
        )
        statuses = embedding_migration_status(tenant=tenant)
        data = {
            "tenants": [status.as_dict() for status in statuses],
            "migrated": all(status.migrated for status in statuses),
        }
        lines = [_status_lines(status) for status in statuses] or ["No tenant has rows yet."]
        self.render(options, data, "\n".join(lines))


def _status_lines(status: TenantEmbeddingModels) -> str:
    state = (
        "migrated"
        if status.migrated
        else f"{status.remaining_memories} memories and {status.remaining_articles} articles "
        "to re-embed"
    )
    lines = [f"{status.slug}: current model {status.label} ({status.fingerprint}): {state}"]
    for models in status.models:
        marker = "current" if models.current else "old    "
        lines.append(
            f"  {marker} {models.fingerprint or '-':16}  {models.memories:>9,} memories  "
            f"{models.articles:>7,} articles  {models.label}"
        )
    if status.pending_memories or status.pending_articles:
        lines.append(
            f"  pending (no vector yet): {status.pending_memories:,} memories, "
            f"{status.pending_articles:,} articles"
        )
    return "\n".join(lines)
