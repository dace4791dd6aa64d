"""Work scheduled for after the commit runs only once the primary commits, never raises into
the committed write, and is scheduled in one place."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction

from apps.core.db.on_commit import after_commit, enqueue_on_commit
from apps.core.db.routers import PRIMARY

APPS = Path(__file__).resolve().parents[2] / "apps"


class RecordingTask:
    name = "tests.recording"

    def __init__(self, *, fail: bool = False) -> None:
        self.sent: list[tuple[object, ...]] = []
        self.fail = fail

    def delay(self, *args: object) -> None:
        if self.fail:
            raise ConnectionError("broker down")
        self.sent.append(args)


@pytest.mark.django_db(transaction=True)
def test_the_task_is_sent_after_the_commit_and_not_on_rollback():
    task = RecordingTask()
    with transaction.atomic(using=PRIMARY):
        enqueue_on_commit(task, ["a", "b"])
        assert task.sent == []
    assert task.sent == [(["a", "b"],)]

    def rolled_back() -> None:
        with transaction.atomic(using=PRIMARY):
            enqueue_on_commit(task, ["c"])
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        rolled_back()
    assert task.sent == [(["a", "b"],)]


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_is_down_does_not_fail_the_committed_write(caplog):
    ran = []
    with transaction.atomic(using=PRIMARY):
        enqueue_on_commit(RecordingTask(fail=True), "x")
        after_commit(lambda: ran.append(True))

    assert ran == [True]
    assert "tests.recording" in caplog.text


def test_only_the_helper_schedules_work_on_commit():
    callers = [
        str(path.relative_to(APPS))
        for path in APPS.rglob("*.py")
        if "on_commit(" in path.read_text()
        and "transaction.on_commit" in path.read_text()
        and path.name != "on_commit.py"
    ]
    assert callers == []
