"""Work that must wait for the primary's transaction to commit: the one way to schedule it.

A task sent before its rows are committed could run on another worker and not find them, so
every enqueue goes through :func:`after_commit`. Callbacks are ``robust``: once the write has
committed, a callback's failure (a broker that is down) is logged, never raised into the
request, and every enqueue has a sweeper behind it that does the work later (the embedding
backfill, the promotion reaper).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from apps.core.db.routers import PRIMARY


def after_commit(callback: Callable[[], None]) -> None:
    """Run ``callback`` once the primary's current transaction commits (at once outside one)."""
    transaction.on_commit(callback, using=PRIMARY, robust=True)


def enqueue_on_commit(task: Any, *args: object) -> None:
    """Send ``task.delay(*args)`` once the primary's current transaction commits."""

    # A named function, not functools.partial: Django logs a robust callback's failure by its
    # __qualname__, which a partial lacks.
    def enqueue() -> None:
        task.delay(*args)

    enqueue.__qualname__ = f"enqueue_on_commit[{getattr(task, 'name', task)}]"
    after_commit(enqueue)
