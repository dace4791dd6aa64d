"""`manage.py schedule list|set|enable|disable|run|seed`."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django_celery_beat.models import PeriodicTask

from apps.core.schedules import code_schedule

pytestmark = pytest.mark.django_db


def _json(*args: str) -> Any:
    out = StringIO()
    call_command("schedule", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_list_json_shows_every_task_from_the_database():
    PeriodicTask.objects.filter(name="memory.promotion_sweep").update(total_run_count=3)

    listed = _json("list")["tasks"]

    assert [task["name"] for task in listed] == sorted(code_schedule())
    sweep = next(task for task in listed if task["name"] == "memory.promotion_sweep")
    assert sweep == {
        "name": "memory.promotion_sweep",
        "task": "memory.promotion_sweep",
        "every_seconds": code_schedule()["memory.promotion_sweep"][1],
        "enabled": True,
        "seeded_every_seconds": code_schedule()["memory.promotion_sweep"][1],
        "last_run_at": None,
        "total_run_count": 3,
    }


def test_set_changes_the_interval_in_the_database():
    shown = _json("set", "memory.graduation_sweep", "--every", "42")

    assert shown["every_seconds"] == 42
    task = PeriodicTask.objects.select_related("interval").get(name="memory.graduation_sweep")
    assert (task.interval.every, task.interval.period) == (42, "seconds")


def test_disable_then_enable():
    assert _json("disable", "memory.prune_expired_sessions")["enabled"] is False
    assert PeriodicTask.objects.get(name="memory.prune_expired_sessions").enabled is False

    assert _json("enable", "memory.prune_expired_sessions")["enabled"] is True
    assert PeriodicTask.objects.get(name="memory.prune_expired_sessions").enabled is True


def test_run_sends_the_task_and_reports_its_id():
    shown = _json("run", "memory.graduation_sweep")

    assert shown["name"] == "memory.graduation_sweep"
    assert shown["task"] == "memory.graduation_sweep"
    assert len(shown["task_id"]) == 36


def test_text_list_has_one_line_per_task():
    out = StringIO()
    call_command("schedule", "list", stdout=out)

    lines = out.getvalue().strip().splitlines()
    assert len(lines) == len(code_schedule())
    assert lines[0].split()[0] == sorted(code_schedule())[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("set", "nope", "--every", "5"),
            "No periodic task named 'nope'.",
            id="_case_unknown_set",
        ),
        pytest.param(("run", "nope"), "No periodic task named 'nope'.", id="_case_unknown_run"),
        pytest.param(
            ("disable", "nope"), "No periodic task named 'nope'.", id="_case_unknown_disable"
        ),
        pytest.param(
            ("set", "memory.graduation_sweep", "--every", "0"),
            "--every must be between 1 and 2592000 seconds.",
            id="_case_zero_interval",
        ),
    ],
)
def test_bad_input_is_a_command_error_and_changes_nothing(args, message):
    before = list(
        PeriodicTask.objects.order_by("name").values_list("name", "interval_id", "enabled")
    )

    with pytest.raises(CommandError, match=message):
        call_command("schedule", *args)

    after = list(
        PeriodicTask.objects.order_by("name").values_list("name", "interval_id", "enabled")
    )
    assert after == before
