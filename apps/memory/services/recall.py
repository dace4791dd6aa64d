"""What serving a recall changes: the recall bump, after the read (the selector only reads)."""

from __future__ import annotations

from django.conf import settings

from apps.memory.recall_bump import schedule_recall_bump
from apps.memory.selectors import RecallResult


def memory_recall_record(*, result: RecallResult) -> bool:
    """Bump the rows the query really matched; nothing on a fallback answer.

    Returns whether a bump was queued.
    """
    if result.meta.get("fallback"):
        return False
    return schedule_recall_bump(
        memory_ids=[
            hit.memory.pk
            for hit in result.results
            if hit.similarity is not None
            and hit.similarity >= settings.MEMORY_RECALL_BUMP_MIN_SCORE
        ]
    )
