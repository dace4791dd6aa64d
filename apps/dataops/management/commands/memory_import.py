"""``memory_import``: read a ``memory_export`` file into a tenant, exactly and idempotently.

    manage.py memory_import --tenant SLUG [--input PATH|-] [--drop-missing-projects]
                            [--drop-embeddings] [--json]

The target tenant is always the one named here, which may differ from the exported one
(ids are global, so rows whose ids exist in another tenant are refused). The whole file is
checked first and written in one transaction: a bad line is reported by number and nothing
is written. Rows already present are skipped, so a second import of the same file adds
nothing. Projects are matched by id, then by slug; ``--drop-missing-projects`` imports rows
of projects the tenant lacks as tenant-wide instead of refusing. ``--drop-embeddings``
imports without vectors (they are embedded afresh), e.g. into a deployment with another
EMBEDDING_DIMENSIONS.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.dataops.export_format import ParsedExport, parse_export
from apps.dataops.services import memory_import
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Import a memory_export JSON Lines file into a tenant (all-or-nothing, idempotent)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Target tenant slug or id.")
        parser.add_argument("--input", default="-", help="File to read, or - for stdin.")
        parser.add_argument(
            "--drop-missing-projects",
            action="store_true",
            help="Import rows of projects the tenant lacks as tenant-wide instead of failing.",
        )
        parser.add_argument(
            "--drop-embeddings",
            action="store_true",
            help="Import without vectors; the embedding backfill embeds the rows afresh.",
        )

    def _parse(self, source: str) -> ParsedExport:
        with tqdm(desc="reading", unit="line", file=sys.stderr, leave=False) as progress:

            def advance(_line: int) -> None:
                progress.update(1)

            if source == "-":
                return parse_export(sys.stdin, on_line=advance)
            path = Path(source)
            if not path.is_file():
                raise CommandFailed("input_not_found", f"{path} is not a file.")
            with path.open(encoding="utf-8") as handle:
                return parse_export(handle, on_line=advance)

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        export = self._parse(options["input"])
        with tqdm(
            total=export.total, desc="importing", unit="record", file=sys.stderr, leave=False
        ) as progress:

            def advance(_record_type: str, count: int) -> None:
                progress.update(count)

            report = memory_import(
                tenant=tenant,
                export=export,
                drop_missing_projects=options["drop_missing_projects"],
                drop_embeddings=options["drop_embeddings"],
                on_progress=advance,
            )
        data = {
            "tenant": tenant.slug,
            "source_tenant": report.source_tenant,
            "input": options["input"],
            "counts": report.counts,
            "created": report.created,
            "expired_turns_skipped": report.expired_turns_skipped,
            "projects_remapped": report.projects_remapped,
            "projects_dropped": report.projects_dropped,
            "graduated_articles_unlinked": report.graduated_articles_unlinked,
            "embeddings_dropped": report.embeddings_dropped,
            "pending_embeddings": report.pending_embeddings,
        }
        lines = [
            f"Imported into {tenant.slug}"
            + (
                f" (exported from {report.source_tenant})"
                if report.source_tenant != tenant.slug
                else ""
            )
            + ":"
        ]
        lines += [
            f"  {kind:<18} {count['created']} created, {count['skipped']} already present"
            for kind, count in report.counts.items()
        ]
        if report.expired_turns_skipped:
            lines.append(f"  {report.expired_turns_skipped} expired session turns skipped")
        if report.projects_remapped:
            lines.append(f"  {len(report.projects_remapped)} project(s) matched by slug")
        if report.projects_dropped:
            lines.append(
                f"  {len(report.projects_dropped)} missing project(s) imported as tenant-wide: "
                + ", ".join(report.projects_dropped)
            )
        if report.graduated_articles_unlinked:
            lines.append(
                f"  {report.graduated_articles_unlinked} graduated memories lost their article "
                "link (article not in the file or the tenant)"
            )
        if report.pending_embeddings:
            lines.append(
                f"  {report.pending_embeddings} row(s) have no vector yet; the embedding backfill "
                "fills them"
            )
        self.render(options, data, "\n".join(lines))
