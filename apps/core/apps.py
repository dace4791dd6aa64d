from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from typing_extensions import override


def _seed_schedule(sender: AppConfig, using: str, **kwargs: Any) -> None:
    from apps.core.db.routers import PRIMARY
    from apps.core.schedules import schedule_seed

    if using == PRIMARY:
        schedule_seed()


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"

    @override
    def ready(self) -> None:
        # After `migrate` (and `flush`) the beat tables hold the code's schedule.
        post_migrate.connect(_seed_schedule, sender=self, dispatch_uid="engram-seed-schedule")
