from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.memory.services.erasure import erase_tenant, render_erasure
from apps.tenancy.selectors import tenant_get_by_slug_or_id


class Command(EngramCommand):
    help = (
        "Erase every row of a tenant (all subjects' memory and sessions, the wiki, projects, "
        "idempotency records, re-embed runs) and print the receipt; the tenant and its API "
        "keys stay. --dry-run prints the same counts and changes nothing."
    )

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="Tenant slug or id.")
        parser.add_argument("--dry-run", action="store_true", help="Count only.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_get_by_slug_or_id(identifier=options["tenant"])
        erasure = erase_tenant(
            tenant=tenant, requested_by="operator:erase_tenant", dry_run=options["dry_run"]
        )
        self.render(options, erasure.receipt, render_erasure(erasure))
