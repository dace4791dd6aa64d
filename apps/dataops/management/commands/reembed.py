"""``reembed``: re-embed a tenant's memories and articles with its current provider.

    manage.py reembed --tenant SLUG [--batch N] [--only-pending] [--json]

Run it after ``configure_provider --kind embedding`` changes the tenant's model. Resumable:
if the provider fails it stops with a non-zero exit, keeps every batch already written, and
the same command continues where it left off (``apps.dataops.services.reembed``).
``--only-pending`` embeds only the rows that have no vector yet.
"""

from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from apps.dataops.services import memory_reembed
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Re-embed a tenant's memories and articles with its current embedding provider."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument(
            "--batch",
            type=int,
            default=settings.EMBEDDING_BATCH_SIZE,
            help="Texts per provider call (default: ENGRAM_EMBEDDING_BATCH_SIZE).",
        )
        parser.add_argument(
            "--only-pending", action="store_true", help="Only rows without a vector."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
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
