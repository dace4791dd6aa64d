"""``knowledge_import``: read Markdown files or JSON Lines written by ``knowledge_export``.

    manage.py knowledge_import --tenant SLUG PATH [--format md|jsonl] [--embed-now] [--json]

Each article is created through the same service as the API (validation, title check,
exact-content dedupe), so importing the same export twice creates nothing the second time.
A bad file or line is reported and skipped; the rest still import. Articles are embedded by
the worker after commit, or here and now with ``--embed-now``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.knowledge.management.commands._transfer import FORMATS, resolve_format
from apps.knowledge.services import ImportOutcome, article_embed_pending, knowledge_import
from apps.knowledge.transfer import ArticleRecord, RecordError, from_json_line, from_markdown
from apps.tenancy.selectors import tenant_get_by_slug_or_id


def _read(path: Path, fmt: str) -> tuple[list[ArticleRecord], list[str]]:
    """The records in ``path`` (oldest first, when the export says) and the unreadable ones."""
    records: list[ArticleRecord] = []
    errors: list[str] = []
    if fmt == "md":
        if not path.is_dir():
            raise CommandFailed("input_not_found", f"{path} is not a directory of Markdown files.")
        for file in sorted(path.glob("*.md")):
            try:
                records.append(from_markdown(file.read_text(encoding="utf-8")))
            except RecordError as exc:
                errors.append(f"{file.name}: {exc}")
    else:
        if not path.is_file():
            raise CommandFailed("input_not_found", f"{path} is not a file.")
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    records.append(from_json_line(line))
                except RecordError as exc:
                    errors.append(f"line {number}: {exc}")
    records.sort(key=lambda record: record.created_at or "")
    return records, errors


class Command(EngramCommand):
    help = "Import knowledge articles from Markdown files or JSON Lines."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="Directory (md) or file (jsonl).")
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default=None,
            help="Default: jsonl for a *.jsonl path, md (a directory) otherwise.",
        )
        parser.add_argument(
            "--embed-now", action="store_true", help="Embed the new articles before returning."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        path: Path = options["path"]
        records, unreadable = _read(path, resolve_format(path, options["format"]))
        with tqdm(
            total=len(records), desc="importing", unit="article", file=sys.stderr, leave=False
        ) as progress:

            def advance(outcome: ImportOutcome) -> None:
                progress.update(1)

            report = knowledge_import(tenant=tenant, records=records, on_progress=advance)
        embedded = 0
        if options["embed_now"] and report.created_ids:
            embedded = article_embed_pending(
                article_ids=[str(pk) for pk in report.created_ids]
            ).embedded
        failures = [f"{o.title}: {o.error}" for o in report.outcomes if o.error] + unreadable
        counts = report.counts
        data = {
            "tenant": tenant.slug,
            **counts,
            "unreadable": len(unreadable),
            "links_applied": report.links_applied,
            "links_skipped": report.links_skipped,
            "embedded": embedded,
            "errors": failures,
        }
        human = (
            f"Imported into {tenant.slug}: {counts['created']} created, "
            f"{counts['duplicate']} duplicate, {counts['failed'] + len(unreadable)} failed; "
            f"{report.links_applied} links."
        )
        if failures:
            human += "\n" + "\n".join(f"  {failure}" for failure in failures)
        self.render(options, data, human)
