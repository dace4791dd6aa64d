"""A question's time words in recall: "where did Maria work last spring?" ranks the memories
that held, or happened, last spring first. A preference, never a filter.

The window comes from the question's text (:func:`apps.extraction.time_words.time_window`,
relative to the recall's ``as_of``, else now). Recall then runs a second read restricted to
the window, every version included (the fact that held last spring may have been superseded
since), as a narrowing of the same guarded scope, so it ranks the window's rows exactly as the
first read ranks the subject's; its best ``MEMORY_RECALL_TIME_WINDOW_FIRST`` hits come first,
the first read's others follow, cut at ``limit``. A window no memory falls in leaves the first
read as it was. Chosen on LoCoMo's dev split, dated (docs/benchmarks/locomo.md, "Time words
in questions").

An event in place of a time ("before the move", "since she left Acme") anchors a window too:
the subject's best memory for the event's words (every version, the same guarded scope) places
it at its ``occurred_at``, and the window ends (before, until) or starts (after, since) there.
Only a memory that holds one of the event's words places it; otherwise there is no window, as
for a time nothing falls in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Q

from apps.core.db.filters import RecordFilter
from apps.extraction.time_words import EventAnchor, TimeWindow, anchored_window
from apps.memory.selectors.recall.results import (
    REASON_KEYWORD,
    REASON_KEYWORD_AND_SEMANTIC,
    REASON_KEYWORD_FALLBACK,
    REASON_KEYWORD_PENDING,
    RecallHit,
    RecallResult,
)

#: A hit found by the event's own words: only such a memory places the event in time.
_BY_WORDS = frozenset(
    {REASON_KEYWORD, REASON_KEYWORD_AND_SEMANTIC, REASON_KEYWORD_PENDING, REASON_KEYWORD_FALLBACK}
)


#: How much of a window an ended fact must overlap to count as held in it (a quarter of a
#: window shorter than four days).
_ENDED_MARGIN = timedelta(days=1)


def window_rows(window: TimeWindow) -> Q:
    """The memories the window covers: what happened or began in it (``occurred_at`` or
    ``valid_from`` in it), and a fact that has ended whose validity overlaps it by more than
    ``_ENDED_MARGIN`` at either edge (the job that was replaced since). A fact still valid that
    began before the window is not taken as being about it: for a memory of an event, "valid
    since" only means "happened before", and every earlier event would count. A row true at no
    time (a correction's empty interval) is never taken."""
    happened = Q()
    began = Q()
    ended = Q(valid_to__isnull=False, valid_to__gt=F("valid_from"))
    # An ended fact must have held some of the window, not only its first or last hours: the
    # nurse job replaced on 1 September at ten is not where Maria worked "in September".
    margin = _ENDED_MARGIN
    if window.start is not None and window.end is not None:
        margin = min(margin, (window.end - window.start) / 4)
    if window.start is not None:
        happened &= Q(occurred_at__gte=window.start)
        began &= Q(valid_from__gte=window.start)
        ended &= Q(valid_to__gt=window.start + margin)
    if window.end is not None:
        happened &= Q(occurred_at__lt=window.end)
        began &= Q(valid_from__lt=window.end)
        ended &= Q(valid_from__lt=window.end - margin)
    true_sometime = Q(valid_to__isnull=True) | Q(valid_to__gt=F("valid_from"))
    return ((happened | began) & true_sometime) | ended


def window_narrowing(
    window: TimeWindow, narrowing: RecordFilter | None, anchor: Any = None
) -> RecordFilter:
    """The caller's own ``narrowing`` (tags, metadata), further narrowed to the window, less
    the memory of the event that placed it (``anchor``): the question asks what came before
    or after the event, not for the event itself."""
    rows = window_rows(window)
    if anchor is not None:
        rows &= ~Q(pk=anchor)
    if narrowing is None:
        return RecordFilter(q=rows, raw={})
    return RecordFilter(q=narrowing.q & rows, raw=narrowing.raw)


def window_until(window: TimeWindow, as_of: datetime) -> TimeWindow | None:
    """``window`` cut to end at ``as_of`` (a recall as of a time reads nothing after it); None
    when nothing of it is left."""
    if window.start is not None and window.start >= as_of:
        return None
    if window.end is not None and window.end <= as_of:
        return window
    return TimeWindow(start=window.start, end=as_of, phrase=window.phrase)


def prefer_window(result: RecallResult, within: RecallResult, limit: int) -> RecallResult:
    """``within``'s best ``MEMORY_RECALL_TIME_WINDOW_FIRST`` hits (the window's read, ranked
    as usual) first, then ``result``'s others in their order, ``limit`` in all. Nothing in
    the window: ``result`` untouched. A hit ``within`` brings carries the window read's score
    (scores compare within one read)."""
    first = within.results[: settings.MEMORY_RECALL_TIME_WINDOW_FIRST]
    if not first:
        return result
    preferred = {hit.memory.pk for hit in first}
    hits = [*first, *(hit for hit in result.results if hit.memory.pk not in preferred)]
    result.results = hits[:limit]
    result.meta["total_count"] = len(result.results)
    result.meta["underfilled"] = len(result.results) < limit
    return result


def event_window(anchor: EventAnchor, found: Sequence[RecallHit]) -> tuple[TimeWindow, Any] | None:
    """The window ``anchor`` names, placed by the best of ``found`` (the recall of the event's
    words) when its words matched, with that memory's id; None when nothing of the event was
    found."""
    event = next(iter(found), None)
    if event is None or event.selection_reason not in _BY_WORDS:
        return None
    return anchored_window(anchor, event.memory.occurred_at), event.memory.pk


def window_meta(
    window: TimeWindow | None, preferred: int, anchor: Any = None
) -> dict[str, Any] | None:
    """``meta.time_window``: the window's ends (ISO 8601, null when open), the words it came
    from, how many hits were ranked first for it, and the memory that placed its event (null
    for a window named by time words)."""
    if window is None:
        return None
    return {
        "start": None if window.start is None else _text(window.start),
        "end": None if window.end is None else _text(window.end),
        "phrase": window.phrase,
        "preferred": preferred,
        "anchor": None if anchor is None else str(anchor),
    }


def _text(value: Any) -> str:
    return str(value.isoformat().replace("+00:00", "Z"))
