from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.management.commands._common import tenant_arg
from apps.tenancy.services import tenant_halt


class Command(EngramCommand):
    help = "Custody halt: refuse agent writes for a tenant (reads and oversight continue)."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tenant", help="Tenant slug or id.")
        parser.add_argument("--reason", default="", help="Why, recorded on the tenant.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_halt(tenant=tenant_arg(options["tenant"]), reason=options["reason"])
        data = {"slug": tenant.slug, "halted_at": tenant.halted_at, "reason": tenant.halt_reason}
        self.render(options, data, f"Halted {tenant.slug}")
