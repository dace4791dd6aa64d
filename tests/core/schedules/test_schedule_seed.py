"""Seeding beat's tables from CELERY_BEAT_SCHEDULE: complete, idempotent, operator-safe."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from apps.core.schedules import (
    code_schedule,
    schedule_list,
    schedule_seed,
    schedule_set_enabled,
    schedule_set_interval,
)

pytestmark = pytest.mark.django_db

FOUR = {
    "memory.prune_expired_sessions",
    "memory.backfill_embeddings",
    "memory.promotion_sweep",
    "memory.graduation_sweep",
}


def test_migrate_seeded_every_code_entry_with_its_task_and_interval():
    listed = {task.name: task for task in schedule_list()}

    assert set(listed) >= FOUR
    assert set(listed) == set(code_schedule())
    for name, (task_name, seconds) in code_schedule().items():
        assert listed[name].task == task_name
        assert listed[name].every_seconds == seconds
        assert listed[name].seeded_every_seconds == seconds
        assert listed[name].enabled is True


def test_seeding_again_changes_nothing():
    before = list(PeriodicTask.objects.order_by("name").values_list("name", "interval_id"))
    intervals = IntervalSchedule.objects.count()

    outcome = schedule_seed()

    assert set(outcome.values()) == {"kept"}
    assert list(PeriodicTask.objects.order_by("name").values_list("name", "interval_id")) == before
    assert IntervalSchedule.objects.count() == intervals


def test_seeding_keeps_an_operators_interval_and_pause():
    schedule_set_interval(name="memory.graduation_sweep", every_seconds=7)
    schedule_set_enabled(name="memory.promotion_sweep", enabled=False)

    outcome = schedule_seed()

    listed = {task.name: task for task in schedule_list()}
    assert outcome["memory.graduation_sweep"] == "kept"
    assert listed["memory.graduation_sweep"].every_seconds == 7
    assert listed["memory.promotion_sweep"].enabled is False


def test_a_code_change_reaches_untouched_rows_only(settings):
    schedule_set_interval(name="memory.graduation_sweep", every_seconds=7)
    settings.CELERY_BEAT_SCHEDULE = {
        **settings.CELERY_BEAT_SCHEDULE,
        "memory.graduation_sweep": {
            "task": "memory.graduation_sweep",
            "schedule": timedelta(seconds=4321),
        },
        "memory.prune_expired_sessions": {
            "task": "memory.prune_expired_sessions",
            "schedule": timedelta(seconds=1234),
        },
    }

    outcome = schedule_seed()

    listed = {task.name: task for task in schedule_list()}
    assert outcome["memory.prune_expired_sessions"] == "updated"
    assert listed["memory.prune_expired_sessions"].every_seconds == 1234
    assert listed["memory.prune_expired_sessions"].seeded_every_seconds == 1234
    assert outcome["memory.graduation_sweep"] == "kept"
    assert listed["memory.graduation_sweep"].every_seconds == 7


def test_a_deleted_row_is_seeded_again():
    PeriodicTask.objects.filter(name="memory.backfill_embeddings").delete()

    outcome = schedule_seed()

    assert outcome["memory.backfill_embeddings"] == "created"
    assert PeriodicTask.objects.filter(name="memory.backfill_embeddings").count() == 1
