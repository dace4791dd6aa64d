from typing import Any

from typing_extensions import override

from apps.dataops.management.commands._erasure import ErasureCommand
from apps.dataops.services import Erasure, erase_tenant
from apps.tenancy.models import Tenant


class Command(ErasureCommand):
    help = (
        "Erase every row of a tenant (all subjects' memory and sessions, the wiki, projects, "
        "idempotency records, re-embed runs) and print the receipt; the tenant and its API "
        "keys stay. Asks first, showing the counts (--yes does not); --dry-run prints the same "
        "counts and changes nothing."
    )

    @override
    def erase(self, *, tenant: Tenant, options: dict[str, Any], dry_run: bool) -> Erasure:
        return erase_tenant(tenant=tenant, requested_by="operator:erase_tenant", dry_run=dry_run)

    @override
    def scope_label(self, *, tenant: Tenant, options: dict[str, Any]) -> str:
        return f"every row of tenant {tenant.slug} (its API keys stay)"
