"""A real `celery beat` process runs from the database and follows an interval change live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from io import StringIO

import pytest
import redis
from django.core.management import call_command

from apps.core.schedules import code_schedule
from tests.memory.tasks.worker_process import ROOT, database_url, redis_answers

BROKER_URL = "redis://127.0.0.1:6379/13"
QUEUE = "celery"
TASK = "tenancy.prune_idempotency_records"
WAIT_S = 60


def _sent_task_names(client: redis.Redis) -> list[str]:
    return [json.loads(raw)["headers"]["task"] for raw in client.lrange(QUEUE, 0, -1)]


@pytest.mark.django_db(transaction=True)
def test_beat_sends_a_task_once_its_interval_is_shortened_without_a_restart(tmp_path):
    if not redis_answers():
        pytest.skip("Redis is not answering on 127.0.0.1:6379 (.ci/run starts it)")
    client = redis.Redis.from_url(BROKER_URL)
    client.flushdb()
    for name in code_schedule():
        if name != TASK:
            call_command("schedule", "disable", name, stdout=StringIO())
    call_command("schedule", "set", TASK, "--every", "3600", stdout=StringIO())
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "beat", "-l", "INFO"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": BROKER_URL,
            "ENGRAM_BEAT_MAX_LOOP_INTERVAL_SECONDS": "1",
            "ENGRAM_DATA_DIR": str(tmp_path),
        },
        cwd=ROOT,
        stdout=(tmp_path / "beat.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while b"beat: Starting" not in (tmp_path / "beat.log").read_bytes():
            assert beat.poll() is None, (tmp_path / "beat.log").read_text()
            assert time.monotonic() < deadline, "beat did not start"
            time.sleep(0.2)
        time.sleep(3)  # a few scheduler ticks at the old interval
        assert _sent_task_names(client) == []

        call_command("schedule", "set", TASK, "--every", "1", stdout=StringIO())

        deadline = time.monotonic() + WAIT_S
        while len(_sent_task_names(client)) < 2 and time.monotonic() < deadline:
            assert beat.poll() is None, (tmp_path / "beat.log").read_text()
            time.sleep(0.2)
    finally:
        beat.terminate()
        beat.wait(timeout=20)
    sent = _sent_task_names(client)
    client.flushdb()
    assert len(sent) >= 2, (tmp_path / "beat.log").read_text()
    assert set(sent) == {TASK}
