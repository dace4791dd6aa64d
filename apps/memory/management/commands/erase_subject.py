from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.memory.services.erasure import erase_subject, render_erasure
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = (
        "Erase every row of one subject of a tenant (memories, sessions, promotion state, "
        "owner-visible and graduated articles, access events, idempotency records) and print "
        "the receipt. --dry-run prints the same counts and changes nothing."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("--subject", required=True, help="The subject id to erase.")
        parser.add_argument("--dry-run", action="store_true", help="Count only.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        erasure = erase_subject(
            tenant=tenant,
            subject_id=options["subject"],
            requested_by="operator:erase_subject",
            dry_run=options["dry_run"],
        )
        self.render(options, erasure.receipt, render_erasure(erasure))
