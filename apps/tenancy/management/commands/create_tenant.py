from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.services import tenant_create


class Command(EngramCommand):
    help = "Create a tenant."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--slug", required=True, help="The tenant's short name, unique; commands take it."
        )
        parser.add_argument("--name", default="", help="A display name.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_create(slug=options["slug"], name=options["name"])
        data = {"id": str(tenant.id), "slug": tenant.slug, "name": tenant.name}
        self.render(options, data, f"Created tenant {tenant.slug} ({tenant.id})")
