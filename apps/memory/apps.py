from django.apps import AppConfig
from typing_extensions import override


class MemoryConfig(AppConfig):
    name = "apps.memory"
    label = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    @override
    def ready(self) -> None:
        from apps.memory.services import (
            assert_promotion_lease_invariant,
            assert_promotion_ttl_invariant,
        )

        # Fail at start-up, naming the settings, rather than silently losing sessions later.
        assert_promotion_ttl_invariant()
        assert_promotion_lease_invariant()
