"""The recall-count hotness signal, kept off the hot path (spec "Recall-count hotness signal").

A recall schedules one UPDATE on a small thread pool and returns; the update itself enforces
the cooldown atomically in SQL, so concurrent recalls cannot double-count. At most
``MEMORY_RECALL_BUMP_MAX_TASKS`` bumps may be pending per process; past that a bump is
dropped (best-effort by design; it must never slow recall down).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from apps.core.telemetry import emit

logger = logging.getLogger(__name__)

_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-bump")
_slots = threading.BoundedSemaphore(settings.MEMORY_RECALL_BUMP_MAX_TASKS)
_pending: set[Future[int]] = set()
_pending_lock = threading.Lock()


def bump_recall_counts(*, memory_ids: Sequence[uuid.UUID]) -> int:
    """+1 recall for each memory not bumped within the cooldown. Returns rows bumped."""
    from apps.memory.models import Memory

    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.MEMORY_RECALL_BUMP_COOLDOWN_SECONDS)
    return (
        Memory.objects.filter(pk__in=list(memory_ids))
        .filter(Q(last_recalled_at__isnull=True) | Q(last_recalled_at__lt=cutoff))
        .update(recall_count=F("recall_count") + 1, last_recalled_at=now)
    )


def _run(memory_ids: list[uuid.UUID]) -> int:
    try:
        return bump_recall_counts(memory_ids=memory_ids)
    except Exception:  # a lost bump is acceptable; a crashed pool thread is not
        logger.exception("recall bump failed")
        return 0
    finally:
        connection.close()  # pool threads must not pin connections between bumps
        _slots.release()


def schedule_recall_bump(*, memory_ids: Sequence[uuid.UUID]) -> bool:
    """Queue a bump; returns False when it was dropped (nothing to do or over the cap)."""
    if not memory_ids:
        return False
    if not _slots.acquire(blocking=False):
        emit("memory_recall.bump_dropped", {"count": len(memory_ids)})
        return False
    future = _executor.submit(_run, list(memory_ids))
    with _pending_lock:
        _pending.add(future)
    future.add_done_callback(_forget)
    return True


def _forget(future: Future[int]) -> None:
    with _pending_lock:
        _pending.discard(future)


def wait_for_pending_bumps(timeout: float = 10.0) -> None:
    """Block until queued bumps finish (tests and graceful shutdown)."""
    with _pending_lock:
        pending = list(_pending)
    for future in pending:
        future.result(timeout=timeout)
