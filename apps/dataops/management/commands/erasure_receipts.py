from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.dataops.selectors import erasure_receipt_list
from apps.dataops.services import erasure_receipt_render


class Command(EngramCommand):
    help = "List erasure receipts, newest first (they hold counts, never content)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--limit", type=int, default=100, help="At most this many, newest first."
        )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        receipts = [erasure_receipt_render(r) for r in erasure_receipt_list(limit=options["limit"])]
        lines = [
            f"{r['id']}  {r['created_at']}  {r['scope']['type']:<7}  "
            f"{'verified' if r['verified'] else 'NOT VERIFIED'}  "
            f"{sum(r['counts'].values())} row(s)  by {r['requested_by']}"
            for r in receipts
        ]
        self.render(options, receipts, "\n".join(lines) or "No erasure receipts.")
