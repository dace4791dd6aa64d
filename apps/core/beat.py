"""Beat's scheduler: django-celery-beat's DatabaseScheduler, seeded rather than overwritten.

The stock scheduler writes ``beat_schedule`` over the database rows every time beat starts
(``update_or_create``), which would undo an operator's ``manage.py schedule set`` on the next
restart. This one seeds with :func:`apps.core.schedules.schedule_seed` instead, which only adds
what is missing and leaves changed rows alone. It also skips Celery's default
``celery.backend_cleanup`` entry: Engram keeps no task results.
"""

from __future__ import annotations

from typing import Any

from django_celery_beat.schedulers import DatabaseScheduler
from typing_extensions import override


class SeededDatabaseScheduler(DatabaseScheduler):
    @override
    def setup_schedule(self) -> None:
        from apps.core.schedules import schedule_seed

        schedule_seed()

    @override
    def install_default_entries(self, data: Any) -> None:
        return
