"""The periodic-task schedule in the database (django-celery-beat), seeded from the code.

``CELERY_BEAT_SCHEDULE`` (config/settings/components/celery.py) is what a deployment starts
with and what reviews see; django-celery-beat's tables are what beat runs, so an operator can
change an interval or pause a task with ``manage.py schedule`` without a deploy, and every beat
process reads the same state instead of a schedule file per container.

Seeding is idempotent and never overrides an operator: each seeded row remembers the interval
the code gave it (in ``description``). A row whose interval still equals that value follows
the code when the code changes; a row an operator changed keeps the operator's value, and
``enabled`` is never touched after the row exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import write_transaction
from apps.core.exceptions import NotFound, ValidationFailed

SEED_MARKER = "engram-seed:every="
MIN_INTERVAL_SECONDS = 1
MAX_INTERVAL_SECONDS = 60 * 60 * 24 * 30


@dataclass(frozen=True)
class ScheduledTask:
    name: str
    task: str
    every_seconds: int | None
    enabled: bool
    seeded_every_seconds: int | None
    last_run_at: str | None
    total_run_count: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "task": self.task,
            "every_seconds": self.every_seconds,
            "enabled": self.enabled,
            "seeded_every_seconds": self.seeded_every_seconds,
            "last_run_at": self.last_run_at,
            "total_run_count": self.total_run_count,
        }


def code_schedule() -> dict[str, tuple[str, int]]:
    """Name → (task, interval seconds) from ``CELERY_BEAT_SCHEDULE``."""
    entries: dict[str, tuple[str, int]] = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        schedule = entry["schedule"]
        if not isinstance(schedule, timedelta):
            raise TypeError(f"{name}: only interval schedules are seeded, got {schedule!r}")
        entries[name] = (str(entry["task"]), int(schedule.total_seconds()))
    return entries


def _interval(seconds: int) -> IntervalSchedule:
    interval, _ = IntervalSchedule.objects.using(PRIMARY).get_or_create(
        every=seconds, period=IntervalSchedule.SECONDS
    )
    return interval


def _seconds(task: PeriodicTask) -> int | None:
    interval = task.interval
    if interval is None:
        return None
    unit = {
        IntervalSchedule.DAYS: 86400,
        IntervalSchedule.HOURS: 3600,
        IntervalSchedule.MINUTES: 60,
        IntervalSchedule.SECONDS: 1,
        IntervalSchedule.MICROSECONDS: 1e-6,
    }[interval.period]
    return int(interval.every * unit)


def _seeded_seconds(task: PeriodicTask) -> int | None:
    if task.description.startswith(SEED_MARKER):
        try:
            return int(task.description.removeprefix(SEED_MARKER))
        except ValueError:
            return None
    return None


def schedule_seed() -> dict[str, str]:
    """Write the code's schedule into the beat tables. Returns name → what happened."""
    outcome: dict[str, str] = {}
    with write_transaction():
        for name, (task_name, seconds) in code_schedule().items():
            existing = (
                PeriodicTask.objects.using(PRIMARY)
                .select_for_update(of=("self",))
                .select_related("interval")
                .filter(name=name)
                .first()
            )
            if existing is None:
                PeriodicTask.objects.using(PRIMARY).create(
                    name=name,
                    task=task_name,
                    interval=_interval(seconds),
                    description=f"{SEED_MARKER}{seconds}",
                    enabled=True,
                )
                outcome[name] = "created"
                continue
            current, seeded = _seconds(existing), _seeded_seconds(existing)
            changed = []
            if existing.task != task_name:
                existing.task = task_name
                changed.append("task")
            if current == seeded and seeded != seconds:
                # Nobody changed the interval since the last seed: it follows the code.
                existing.interval = _interval(seconds)
                existing.description = f"{SEED_MARKER}{seconds}"
                changed += ["interval", "description"]
            if changed:
                existing.save(update_fields=changed)
                outcome[name] = "updated"
            else:
                outcome[name] = "kept"
    return outcome


def _as_scheduled(task: PeriodicTask) -> ScheduledTask:
    return ScheduledTask(
        name=task.name,
        task=task.task,
        every_seconds=_seconds(task),
        enabled=task.enabled,
        seeded_every_seconds=_seeded_seconds(task),
        last_run_at=task.last_run_at.isoformat() if task.last_run_at else None,
        total_run_count=task.total_run_count,
    )


def schedule_list() -> list[ScheduledTask]:
    tasks = PeriodicTask.objects.using(PRIMARY).select_related("interval").order_by("name")
    return [_as_scheduled(task) for task in tasks]


def _get(name: str) -> PeriodicTask:
    task = PeriodicTask.objects.using(PRIMARY).select_related("interval").filter(name=name).first()
    if task is None:
        raise NotFound(f"No periodic task named {name!r}.")
    return task


def schedule_get(*, name: str) -> ScheduledTask:
    return _as_scheduled(_get(name))


def schedule_set_interval(*, name: str, every_seconds: int) -> ScheduledTask:
    """Change one task's interval; running beat processes pick it up without a restart."""
    if not MIN_INTERVAL_SECONDS <= every_seconds <= MAX_INTERVAL_SECONDS:
        raise ValidationFailed(
            f"--every must be between {MIN_INTERVAL_SECONDS} and {MAX_INTERVAL_SECONDS} seconds."
        )
    with write_transaction():
        task = _get(name)
        task.interval = _interval(every_seconds)
        # Saving the task bumps django-celery-beat's change marker, which beat polls.
        task.save(update_fields=["interval"])
    return _as_scheduled(task)


def schedule_set_enabled(*, name: str, enabled: bool) -> ScheduledTask:
    with write_transaction():
        task = _get(name)
        task.enabled = enabled
        task.save(update_fields=["enabled"])
    return _as_scheduled(task)


def schedule_run(*, name: str) -> str:
    """Send one task now (through the broker, to a worker). Returns the Celery task id."""
    from celery import current_app as app

    task = _get(name)
    result = app.send_task(
        task.task, args=json.loads(task.args or "[]"), kwargs=json.loads(task.kwargs or "{}")
    )
    return str(result.id)
