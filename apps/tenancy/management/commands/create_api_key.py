from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.tenancy.management.commands._common import api_key_summary, tenant_arg
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create


class Command(EngramCommand):
    help = "Issue an API key. The secret is printed once and cannot be shown again."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="Tenant slug or id (omit for a superadmin key).")
        parser.add_argument(
            "--role",
            required=True,
            choices=ApiKeyRole.values,
            help="What the key may do (docs/operators.md, section 2).",
        )
        parser.add_argument("--agent-id", default="", help="Agent identity (agent keys only).")
        parser.add_argument("--name", default="", help="A label for operators.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        if options["role"] != ApiKeyRole.SUPERADMIN and not options["tenant"]:
            raise CommandFailed("tenant_required", "--tenant is required for this role.")
        tenant = tenant_arg(options["tenant"]) if options["tenant"] else None
        issued = api_key_create(
            tenant=tenant, role=options["role"], agent_id=options["agent_id"], name=options["name"]
        )
        data = {**api_key_summary(issued.api_key), "key": issued.raw_key}
        self.render(options, data, issued.raw_key)
