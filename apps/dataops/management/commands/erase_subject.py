from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.dataops.management.commands._erasure import ErasureCommand
from apps.dataops.services import Erasure, erase_subject
from apps.tenancy.models import Tenant


class Command(ErasureCommand):
    help = (
        "Erase every row of one subject of a tenant (memories, sessions, promotion state, "
        "owner-visible and graduated articles, access events, idempotency records) and print "
        "the receipt. Asks first, showing the counts (--yes does not); --dry-run prints the "
        "same counts and changes nothing."
    )

    @override
    def add_scope_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--subject", required=True, help="The subject id to erase.")

    @override
    def erase(self, *, tenant: Tenant, options: dict[str, Any], dry_run: bool) -> Erasure:
        return erase_subject(
            tenant=tenant,
            subject_id=options["subject"],
            requested_by="operator:erase_subject",
            dry_run=dry_run,
        )

    @override
    def scope_label(self, *, tenant: Tenant, options: dict[str, Any]) -> str:
        return f"every row of subject {options['subject']!r} of tenant {tenant.slug}"
