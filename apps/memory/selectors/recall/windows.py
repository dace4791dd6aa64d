"""A question's time words in recall: "where did Maria work last spring?" ranks the memories
that held, or happened, last spring first. A preference, never a filter.

The window comes from the question's text (:func:`apps.extraction.time_words.time_window`,
relative to the recall's ``as_of``, else now). Recall then runs a second read restricted to
the window, every version included (the fact that held last spring may have been superseded
since), as a narrowing of the same guarded scope, so it ranks the window's rows exactly as the
first read ranks the subject's; its hits come first, the first read's others follow, cut at
``limit``. A window no memory falls in leaves the first read as it was.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F, Q

from apps.core.db.filters import RecordFilter
from apps.extraction.time_words import TimeWindow
from apps.memory.selectors.recall.results import RecallResult


def window_rows(window: TimeWindow) -> Q:
    """The memories the window covers: valid at some time in it (``valid_from`` < end and
    ``valid_to`` > start, or still valid), or written as happening in it (``occurred_at``).
    A row true at no time (a correction's empty interval, ``valid_to = valid_from``) is not
    preferred for when it was written."""
    valid = Q()
    happened = Q()
    if window.end is not None:
        valid &= Q(valid_from__lt=window.end)
        happened &= Q(occurred_at__lt=window.end)
    if window.start is not None:
        valid &= Q(valid_to__isnull=True) | Q(valid_to__gt=window.start)
        happened &= Q(occurred_at__gte=window.start)
    true_sometime = Q(valid_to__isnull=True) | Q(valid_to__gt=F("valid_from"))
    return (valid | happened) & true_sometime


def window_narrowing(window: TimeWindow, narrowing: RecordFilter | None) -> RecordFilter:
    """The caller's own ``narrowing`` (tags, metadata), further narrowed to the window."""
    rows = window_rows(window)
    if narrowing is None:
        return RecordFilter(q=rows, raw={})
    return RecordFilter(q=narrowing.q & rows, raw=narrowing.raw)


def prefer_window(result: RecallResult, within: RecallResult, limit: int) -> RecallResult:
    """``within``'s hits (the window's read, ranked as usual) first, then ``result``'s others
    in their order, ``limit`` in all. Nothing in the window: ``result`` untouched. A hit
    ``within`` brings carries the window read's score (scores compare within one read)."""
    if not within.results:
        return result
    preferred = {hit.memory.pk for hit in within.results}
    hits = [*within.results, *(hit for hit in result.results if hit.memory.pk not in preferred)]
    result.results = hits[:limit]
    result.meta["total_count"] = len(result.results)
    result.meta["underfilled"] = len(result.results) < limit
    return result


def window_meta(window: TimeWindow | None, preferred: int) -> dict[str, Any] | None:
    """``meta.time_window``: the window's ends (ISO 8601, null when open), the words it came
    from, and how many hits were ranked first for it."""
    if window is None:
        return None
    return {
        "start": None if window.start is None else _text(window.start),
        "end": None if window.end is None else _text(window.end),
        "phrase": window.phrase,
        "preferred": preferred,
    }


def _text(value: Any) -> str:
    return str(value.isoformat().replace("+00:00", "Z"))
