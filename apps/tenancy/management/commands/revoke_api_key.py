from typing import Any

from django.core.management.base import CommandParser
from typing_extensions import override

from apps.core.management.base import CommandFailed, EngramCommand
from apps.tenancy.management.commands._common import api_key_summary
from apps.tenancy.selectors import api_key_get
from apps.tenancy.services import api_key_revoke


class Command(EngramCommand):
    help = (
        "Revoke an API key by its prefix or id; it is refused at once (docs/operators.md, "
        '"Revocation"). Asks first (--yes does not).'
    )
    destructive = True

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", help="The key's prefix (as listed) or id.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        api_key = api_key_get(identifier=options["key"])
        if api_key is None:
            raise CommandFailed("api_key_not_found", f"No API key {options['key']!r}.")
        if api_key.revoked_at is None:
            owner = api_key.tenant.slug if api_key.tenant is not None else "the deployment"
            label = f" {api_key.name!r}" if api_key.name else ""
            self.confirm(
                options,
                f"Revoke the {api_key.role} key {api_key.prefix}{label} of {owner}? Every "
                "client using it is refused from now on; this cannot be undone.",
            )
        api_key_revoke(api_key=api_key)
        self.render(options, api_key_summary(api_key), f"Revoked {api_key.prefix}")
