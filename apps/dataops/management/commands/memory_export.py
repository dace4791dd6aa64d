"""``memory_export``: write a tenant (or one subject) as JSON Lines, exactly.

    manage.py memory_export --tenant SLUG [--subject ID [--include-knowledge]]
                            [--output PATH|-] [--json]

One header line, then one record per line (format: ``apps.dataops.export_format``): articles and
their links, long-term memories with their vectors, session turns, promotion watermarks.
``--subject`` limits memories and sessions to that subject and leaves knowledge out unless
``--include-knowledge``. The file is written next to PATH and renamed into place when
complete; ``-`` (the default) writes to stdout and the summary to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm
from typing_extensions import override

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed, EngramCommand
from apps.dataops.export_format import to_json_line
from apps.dataops.selectors import memory_export_records
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = "Export a tenant's memories, sessions and knowledge as JSON Lines (exact)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("--subject", help="Only this subject's memories and sessions.")
        parser.add_argument(
            "--include-knowledge",
            action="store_true",
            help="With --subject: export the tenant's articles too (always on without it).",
        )
        parser.add_argument("--output", default="-", help="File to write, or - for stdout.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["include_knowledge"] and not options["subject"]:
            raise CommandFailed(
                INVALID_ARGUMENTS, "--include-knowledge only applies with --subject."
            )
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        subject = options["subject"]
        records = memory_export_records(
            tenant=tenant,
            subject_id=subject,
            include_knowledge=subject is None or options["include_knowledge"],
        )
        try:
            header = next(records)
            counts: dict[str, int] = header["counts"]
            total = sum(counts.values())
            output = options["output"]
            if output == "-":
                self._write(
                    lambda text: self.stdout.write(text, ending=""), header, records, total=total
                )
            else:
                self._write_file(Path(output), header, records, total=total)
        finally:
            # Ends the export's snapshot transaction even when writing failed half-way.
            records.close()
        data = {"tenant": tenant.slug, "subject": subject, "output": output, "counts": counts}
        human = f"Exported {tenant.slug}" + (f" (subject {subject})" if subject else "") + ": "
        human += ", ".join(f"{count} {kind}" for kind, count in counts.items())
        human += f" → {output if output != '-' else 'stdout'}"
        if output == "-":
            # stdout carries the export itself; the summary goes to stderr.
            summary = json.dumps(data, indent=2, sort_keys=True) if options["json"] else human
            self.stderr.write(summary)
        else:
            self.render(options, data, human)

    def _write_file(self, path: Path, header: dict[str, Any], records: Any, *, total: int) -> None:
        """Write next to ``path`` and rename into place: never a truncated file at ``path``."""
        if path.is_dir():
            raise CommandFailed("invalid_output", f"{path} is a directory; give a file path.")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        try:
            with partial.open("w", encoding="utf-8") as handle:
                self._write(handle.write, header, records, total=total)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)

    def _write(
        self, write: Callable[[str], object], header: dict[str, Any], records: Any, *, total: int
    ) -> None:
        write(to_json_line(header) + "\n")
        for record in tqdm(
            records, total=total, desc="exporting", unit="record", file=sys.stderr, leave=False
        ):
            write(to_json_line(record) + "\n")
