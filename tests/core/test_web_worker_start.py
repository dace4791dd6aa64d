"""What a web or Celery pool process does once it has loaded, before its first request or task
(config/gunicorn.py, config/celery.py, apps/core/loaded_objects.py)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
from celery.signals import worker_process_init

import config.celery  # noqa: F401  (connects the pool process's start-up receivers)
from config import gunicorn


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def _frozen_after(start: Callable[[], object]) -> int:
    start()
    # What stays for the process's life is out of the collector's reach: only what was made
    # since is left for a full collection to walk.
    assert len(gc.get_objects()) < gc.get_freeze_count() // 10
    return gc.get_freeze_count()


def test_a_web_worker_freezes_what_it_loaded_before_its_first_request(unfrozen):
    assert _frozen_after(lambda: gunicorn.post_worker_init(worker=None)) > 50_000


def test_a_celery_pool_process_freezes_what_it_loaded_before_its_first_task(unfrozen):
    assert _frozen_after(lambda: worker_process_init.send(sender=None)) > 50_000
