"""``knowledge_export``: write a tenant's articles as Markdown files or JSON Lines.

    manage.py knowledge_export --tenant SLUG PATH [--format md|jsonl] [--include-archived]
                               [--json]

Markdown (the default unless PATH ends in ``.jsonl``): PATH is a directory, one
``<title-slug>-<id>.md`` file per article with YAML front matter. JSON Lines: PATH is one file,
one article per line. ``knowledge_import`` reads either back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.knowledge.management.commands._transfer import FORMATS, resolve_format
from apps.knowledge.selectors import knowledge_export_records
from apps.knowledge.transfer import to_json_line, to_markdown
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Export a tenant's knowledge articles as Markdown files or JSON Lines."

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
            "--include-archived", action="store_true", help="Export archived articles too."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        path: Path = options["path"]
        fmt = resolve_format(path, options["format"])
        records = knowledge_export_records(
            tenant=tenant, include_archived=options["include_archived"]
        )
        progress = tqdm(records, desc="exporting", unit="article", file=sys.stderr, leave=False)
        if fmt == "md":
            path.mkdir(parents=True, exist_ok=True)
            for record in progress:
                (path / record.filename()).write_text(to_markdown(record), encoding="utf-8")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                for record in progress:
                    handle.write(to_json_line(record) + "\n")
        self.render(
            options,
            {"tenant": tenant.slug, "format": fmt, "path": str(path), "exported": len(records)},
            f"Exported {len(records)} articles of {tenant.slug} to {path} ({fmt}).",
        )
