"""What an embedding task does when the provider is down: it snoozes, a bounded number of
times. Its rows stay pending meanwhile (memories stay keyword-searchable), and once every retry
is spent the beat backfill is the safety net."""

from __future__ import annotations

from typing import Any

from django.conf import settings

MAX_EMBEDDING_RETRIES = 10


def snooze_while_unavailable(task: Any, *, unavailable: bool) -> None:
    """Retry the bound ``task`` later if the provider was ``unavailable`` and it has retries
    left (declare it with ``max_retries=MAX_EMBEDDING_RETRIES``)."""
    if unavailable and task.request.retries < MAX_EMBEDDING_RETRIES:
        raise task.retry(countdown=settings.EMBEDDING_RETRY_COUNTDOWN_SECONDS)
