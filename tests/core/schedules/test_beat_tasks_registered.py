"""Every beat entry names a task a worker would run: a renamed or deleted task must fail here,
not silently every interval in production."""

from __future__ import annotations

import inspect

import pytest
from django.conf import settings

from config.celery import app

SCHEDULE = settings.CELERY_BEAT_SCHEDULE


@pytest.fixture(scope="module")
def registered() -> set[str]:
    # What a worker's start-up autodiscovery does: import every installed app's tasks module.
    app.autodiscover_tasks(force=True)
    return set(app.tasks.keys())


def test_the_schedule_is_not_empty():
    assert SCHEDULE


@pytest.mark.parametrize("entry", sorted(SCHEDULE))
def test_a_beat_entry_names_a_registered_task(registered, entry):
    task_name = SCHEDULE[entry]["task"]

    assert task_name in registered, f"{entry!r} schedules unknown task {task_name!r}"


@pytest.mark.parametrize("entry", sorted(SCHEDULE))
def test_a_beat_task_lives_in_its_apps_tasks_module_and_takes_no_arguments(registered, entry):
    task_name = str(SCHEDULE[entry]["task"])
    task = app.tasks[task_name]

    # STYLE rule 11: "<app>.<verb_noun>" is defined in apps/<app>/tasks.py.
    assert task.__module__ == f"apps.{task_name.split('.')[0]}.tasks"
    # Beat sends the entry's args, none here; a task that needed some would fail every run.
    sent = len(SCHEDULE[entry].get("args", ()))
    required = [
        parameter
        for parameter in inspect.signature(task.run).parameters.values()
        if parameter.default is parameter.empty
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    ]
    assert len(required) == sent
