from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.management.commands._common import api_key_summary, tenant_arg
from apps.tenancy.selectors import api_key_list


class Command(EngramCommand):
    help = "List API keys of a tenant (or the superadmin keys without --tenant)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Tenant slug or id.")
        parser.add_argument("--include-revoked", action="store_true", help="List revoked keys too.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_arg(options["tenant"]) if options["tenant"] else None
        keys = [
            api_key_summary(key)
            for key in api_key_list(tenant=tenant, include_revoked=options["include_revoked"])
        ]
        lines = [
            f"{k['prefix']}  {k['role']:<12} {k['agent_id'] or '-':<20} "
            f"{'revoked' if k['revoked_at'] else 'active'}"
            for k in keys
        ]
        self.render(options, keys, "\n".join(lines) or "(no keys)")
