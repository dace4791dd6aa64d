from typing import Any

from django.core.management.base import CommandError, CommandParser
from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.management.commands._common import api_key_summary
from apps.tenancy.selectors import api_key_get
from apps.tenancy.services import api_key_revoke


class Command(EngramCommand):
    help = "Revoke an API key by its prefix or id."

    @override
    def add_command_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", help="The key's prefix (as listed) or id.")

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        api_key = api_key_get(identifier=options["key"])
        if api_key is None:
            raise CommandError(f"No API key {options['key']!r}.")
        api_key_revoke(api_key=api_key)
        self.render(options, api_key_summary(api_key), f"Revoked {api_key.prefix}")
