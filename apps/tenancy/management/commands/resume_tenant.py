from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.management.commands._common import tenant_arg
from apps.tenancy.services import tenant_resume


class Command(EngramCommand):
    help = "Lift a custody halt."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tenant", help="Tenant slug or id.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_resume(tenant=tenant_arg(options["tenant"]))
        self.render(options, {"slug": tenant.slug, "halted_at": None}, f"Resumed {tenant.slug}")
