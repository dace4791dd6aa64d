from typing import Any

from typing_extensions import override

from apps.core.management.base import EngramCommand
from apps.tenancy.services import provider_secrets_rotate


class Command(EngramCommand):
    help = (
        "Re-encrypt under ENGRAM_ENCRYPTION_KEY every tenant provider secret that only one of "
        "ENGRAM_ENCRYPTION_KEY_FALLBACKS can read (after a key rotation; `make run` runs it on "
        "start). Secrets already under the current key are left alone."
    )

    @override
    def handle(self, *args: Any, **options: Any) -> None:
        rotated = provider_secrets_rotate()
        human = f"{rotated} provider secret(s) re-encrypted under the current key"
        self.render(options, {"rotated": rotated}, human)
