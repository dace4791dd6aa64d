# length: one table of time expressions, the resolvers it names and the calendar arithmetic
# they share; event anchors read the same table to tell a time from an event.
"""Time words in a question: "where did she work last spring?" → the window that phrase names.

:func:`time_window` finds the first time expression in a text and resolves it against a
reference instant (a recall's ``as_of``, else now) into a half-open window ``[start, end)``
in UTC. Recall ranks the memories that held, or happened, in it first (``apps.memory.
selectors.recall.time_window``). Pure and table-driven; no rows, no clock of its own.

What it reads (case-insensitive; the first expression in the text wins, the longest where two
overlap):

* **dates**: ``2023-05-07``, ``7 May 2023``, ``May 7th, 2023``, ``on 7 May`` / ``May 7``
  (the latest such day not after the reference);
* **months and years**: ``May 2023``, ``in May`` (the latest May begun by the reference),
  ``last May`` (the latest May before the reference's month), ``in 2022``, ``2022``;
* **seasons** (northern meteorological: spring March–May, summer June–August, autumn/fall
  September–November, winter December–February): ``last spring`` (the latest spring before
  the season the reference is in), ``this summer`` / ``in the summer`` (the latest begun),
  ``summer 2023`` / ``the winter of 2022`` (a winter is named by the year its December is in);
* **relative**: ``yesterday``, ``today``, ``the day before yesterday``, ``last/this
  week|month|year`` (calendar weeks start on Monday), ``N days|weeks|months|years ago``
  (the calendar unit holding the reference minus N units; N in digits or words: "two", "a",
  "a couple of"), ``the last/past N days|weeks|…`` (the N units up to the reference);
* **parts and quarters**: ``early`` / ``mid`` / ``late`` X and ``the start`` (``beginning``) /
  ``middle`` / ``end of`` X are its first, middle and last third in whole days, ``the first`` /
  ``second half of`` X a half ("early 2025", "mid-June", "the end of last year", "the start of
  the year": the reference's); ``Q2 2025``, ``Q1`` (the latest begun);
* **open ends**: ``before``/``until``/``prior to`` X ends the window where X begins (until:
  where X ends), ``since`` X starts it where X begins, ``after`` X where X ends; the other
  end is open (None);
* **now**: ``currently``, ``now``, ``these days``, ``at the moment``, … — the question is
  about the present: no window at all, whatever else it says.

* **vague counts**: ``a few`` / ``several`` days|weeks|months|years ``ago``: the calendar
  units two to four back (several: two to six);
* **ranges**: ``between`` X ``and`` Y, ``from`` X ``to`` (``until``, ``through``) Y, each side
  one of the expressions above: from where X begins to where Y ends; a side without a year
  takes the other's ("between May and July 2023").

What it does not read: times of day, other calendars or the southern hemisphere's seasons.
An event in place of a time ("before the move", "since she left Acme") is not a window here:
:func:`event_anchor` reads its words, and recall finds the memory of the event whose time ends
or starts the window.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dateutil.relativedelta import relativedelta

from apps.extraction.numbers import CARDINALS, INDEFINITE, number_value


@dataclass(frozen=True)
class TimeWindow:
    """``[start, end)`` in UTC; either end None when open. ``phrase``: the words it came from."""

    start: datetime | None
    end: datetime | None
    phrase: str


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# A month named on its own must be a full name after a word that makes it a time ("in May",
# "last March"): "may" and "march" are verbs, and "mar"/"jan" are rarely months unqualified.
_FULL_MONTH = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = "|".join(_SEASONS)
_UNITS = {
    "day": relativedelta(days=1),
    "week": relativedelta(weeks=1),
    "month": relativedelta(months=1),
    "year": relativedelta(years=1),
}
_UNIT = "day|week|month|year"
_NUMBERS = {**INDEFINITE, **CARDINALS}
_NUMBER = r"\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_NOW = re.compile(
    r"\b(?:currently|nowadays|now|these days|at the moment|at present|presently)\b", re.I
)
# An open end before the expression: "since May 2023", "before last summer".
_BOUND = re.compile(r"\b(before|until|till|prior to|since|after)\s+$", re.I)

# A part of the period named after it: "early 2025", "the end of last year", "mid-March",
# "the first half of 2024". Each maps to its share of the period, as fractions.
_PART = re.compile(
    r"\b(?:(?:at|in|by|towards?|around)\s+)?(?:"
    r"(?P<adverb>early|mid|late)(?:\s*-\s*|\s+)|"
    # Only with "of": "start one year ago" is a verb.
    r"(?:the\s+)?(?P<noun>start|beginning|middle|end|first half|second half)\s+of\s+"
    r")(?:(?:in|the)\s+)?$",
    re.I,
)
_PARTS = {
    "early": (0, 3),
    "start": (0, 3),
    "beginning": (0, 3),
    "mid": (1, 3),
    "middle": (1, 3),
    "late": (2, 3),
    "end": (2, 3),
    "first half": (0, 2),
    "second half": (1, 2),
}

_Span = tuple[datetime, datetime]


def _part_of(span: _Span, part: str) -> _Span:
    """The ``part`` of ``span`` in whole days: a third (early, mid, late) or a half."""
    index, parts = _PARTS[part.lower()]
    start, end = span
    days = (end - start).days
    if days < parts:  # a single day has no early or late part worth a window
        return span
    return (
        start + timedelta(days=days * index // parts),
        start + timedelta(days=days * (index + 1) // parts),
    )


def _day(year: int, month: int, day: int) -> _Span | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # 31 June, 29 February of a common year
        return None
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> _Span:
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, start + relativedelta(months=1)


def _year(year: int) -> _Span:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _unit_start(instant: datetime, unit: str) -> datetime:
    """The start of the calendar ``unit`` holding ``instant`` (weeks start on Monday)."""
    day = instant.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


def _unit(instant: datetime, unit: str) -> _Span:
    start = _unit_start(instant, unit)
    return start, start + _UNITS[unit]


def _season_start(year: int, season: str) -> datetime:
    return datetime(year, _SEASONS[season], 1, tzinfo=UTC)


def _latest_season(reference: datetime, season: str, *, before_current: bool) -> _Span:
    """The latest ``season`` begun by ``reference``; with ``before_current``, the latest one
    before the occurrence of that season the reference is in (if it is in one)."""
    start = _season_start(reference.year, season)
    while start > reference:
        start -= relativedelta(years=1)
    if before_current and reference < start + relativedelta(months=3):
        start -= relativedelta(years=1)
    return start, start + relativedelta(months=3)


def _latest_day(reference: datetime, month: int, day: int) -> _Span | None:
    """The latest ``day`` of ``month`` not after the reference's day."""
    for year in (reference.year, reference.year - 1):
        span = _day(year, month, day)
        if span is not None and span[0] <= reference:
            return span
    # 29 February: the latest leap year's.
    year = reference.year - 1
    while (span := _day(year, month, day)) is None and year > reference.year - 8:
        year -= 1
    return span


def _named_month(reference: datetime, month: int, which: str) -> _Span:
    """``this`` May: the reference year's; ``last`` May: the latest before the reference's
    month; ``in`` May: the latest begun by the reference."""
    if which == "this":
        return _month(reference.year, month)
    year = reference.year if month <= reference.month else reference.year - 1
    if which == "last" and month == reference.month:
        year -= 1
    return _month(year, month)


def _season_of(match: re.Match[str], reference: datetime) -> _Span:
    season = match["season"].lower()
    if match["year"]:
        start = _season_start(int(match["year"]), season)
        return start, start + relativedelta(months=3)
    which = match["which"].lower()
    return _latest_season(reference, season, before_current=which in ("last", "past"))


def _relative_unit(match: re.Match[str], reference: datetime) -> _Span:
    unit = match["unit"].lower()
    shift = relativedelta() if match["which"].lower() == "this" else -_UNITS[unit]
    return _unit(reference + shift, unit)


def _ago(match: re.Match[str], reference: datetime) -> _Span:
    unit = match["unit"].lower()
    return _unit(reference - _UNITS[unit] * number_value(match["count"]), unit)


#: "a few weeks ago" reaches this many units back, "several" this many: a span, not one unit.
_VAGUE_COUNTS = {"a few": (2, 4), "few": (2, 4), "several": (2, 6)}
_VAGUE = "|".join(_VAGUE_COUNTS)


def _vague_ago(match: re.Match[str], reference: datetime) -> _Span:
    """``a few weeks ago``: the calendar units from two to four back (several: to six)."""
    unit = match["unit"].lower()
    nearest, farthest = _VAGUE_COUNTS[" ".join(match["count"].lower().split())]
    start = _unit_start(reference - _UNITS[unit] * farthest, unit)
    return start, _unit_start(reference - _UNITS[unit] * nearest, unit) + _UNITS[unit]


def _past(match: re.Match[str], reference: datetime) -> _Span:
    unit = match["unit"].lower()
    return reference - _UNITS[unit] * number_value(match["count"]), reference


def _quarter(match: re.Match[str], reference: datetime) -> _Span:
    """``Q2 2025``; ``Q2`` alone: the latest second quarter begun by the reference."""
    first_month = 3 * int(match["quarter"]) - 2
    year = int(match["year"]) if match["year"] else reference.year
    if not match["year"] and first_month > reference.month:
        year -= 1
    start = datetime(year, first_month, 1, tzinfo=UTC)
    return start, start + relativedelta(months=3)


def _month_of(match: re.Match[str], reference: datetime) -> _Span:
    month = _MONTHS[match["month"].lower()]
    return _named_month(reference, month, match["which"].lower())


Resolver = Callable[[re.Match[str], datetime], _Span | None]

#: (pattern, resolver): every pattern is tried; the first match in the text wins, the
#: longest where two overlap ("in May 2023" over "in May").
_TABLE: tuple[tuple[str, Resolver], ...] = (
    (
        r"\b(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)\b",
        lambda m, _r: _day(int(m["year"]), int(m["month"]), int(m["day"])),
    ),
    (
        rf"\b(?:on\s+)?(?:the\s+)?{_DAY}(?:\s+of)?\s+(?P<month>{_ANY_MONTH})\.?,?\s+"
        rf"(?P<year>{_YEAR})\b",
        lambda m, _r: _day(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        rf"\b(?:on\s+)?(?P<month>{_ANY_MONTH})\.?\s+{_DAY},?\s+(?P<year>{_YEAR})\b",
        lambda m, _r: _day(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        rf"\b(?:on\s+)?(?:the\s+)?{_DAY}(?:\s+of)?\s+(?P<month>{_ANY_MONTH})\b",
        lambda m, r: _latest_day(r, _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        rf"\b(?:on\s+)?(?P<month>{_ANY_MONTH})\.?\s+{_DAY}\b",
        lambda m, r: _latest_day(r, _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        rf"\b(?:(?:in|during)\s+)?(?P<month>{_ANY_MONTH})\.?,?\s+(?:of\s+)?(?P<year>{_YEAR})\b",
        lambda m, _r: _month(int(m["year"]), _MONTHS[m["month"].lower()]),
    ),
    (rf"\b(?P<which>last|this|in|during)\s+(?P<month>{_FULL_MONTH})\b", _month_of),
    # A part of a month: "early May", "the end of March" (the latest begun, as "in May").
    (
        r"(?:(?<=of\s)|(?<=early\s)|(?<=mid\s)|(?<=mid-)|(?<=late\s))"
        rf"(?P<which>)(?P<month>{_FULL_MONTH})\b",
        lambda m, r: _named_month(r, _MONTHS[m["month"].lower()], "in"),
    ),
    (
        rf"\b(?:(?:in|during)\s+)?(?:the\s+year\s+)?(?P<year>{_YEAR})\b",
        lambda m, _r: _year(int(m["year"])),
    ),
    (
        rf"\b(?:(?:in|during)\s+)?(?:the\s+)?(?P<season>{_SEASON})\s+(?:of\s+)?(?P<year>{_YEAR})\b",
        _season_of,
    ),
    (
        rf"\b(?P<which>last|this|(?:in|during|over)(?:\s+the)?|past)\s+(?P<season>{_SEASON})\b"
        r"(?P<year>)",
        _season_of,
    ),
    (rf"\b(?:in\s+)?Q(?P<quarter>[1-4])(?:\s+(?P<year>{_YEAR}))?\b", _quarter),
    # "the end of the year", "the first half of the month": the one the reference is in.
    (r"(?<=of\s)the\s+(?P<unit>week|month|year)\b", lambda m, r: _unit(r, m["unit"].lower())),
    (r"\bthe\s+day\s+before\s+yesterday\b", lambda _m, r: _unit(r - timedelta(days=2), "day")),
    (r"\byesterday\b", lambda _m, r: _unit(r - timedelta(days=1), "day")),
    (r"\btoday\b", lambda _m, r: _unit(r, "day")),
    (rf"\b(?P<which>last|this|previous)\s+(?P<unit>{_UNIT})\b", _relative_unit),
    (rf"\b(?P<count>{_NUMBER})\s+(?P<unit>{_UNIT})s?\s+ago\b", _ago),
    (rf"\b(?P<count>{_VAGUE})\s+(?P<unit>{_UNIT})s\s+ago\b", _vague_ago),
    (
        rf"\b(?:(?:in|over|during)\s+)?the\s+(?:last|past)\s+(?P<count>{_NUMBER})\s+"
        rf"(?P<unit>{_UNIT})s?\b",
        _past,
    ),
)
_RULES = tuple((re.compile(pattern, re.I), resolver) for pattern, resolver in _TABLE)


#: Every expression of the table holds one of these: a text without any names no time, and
#: one scan of it spares the table's.
_ANY_TIME_WORD = re.compile(
    rf"\d|\b(?:{_ANY_MONTH}|{_SEASON}|yesterday|today|(?:{_UNIT})s?|q[1-4])\b", re.I
)


def _first(text: str) -> tuple[re.Match[str], Resolver] | None:
    if _ANY_TIME_WORD.search(text) is None:
        return None
    found = [(match, resolver) for pattern, resolver in _RULES for match in pattern.finditer(text)]
    if not found:
        return None
    earliest = min(match.start() for match, _ in found)
    # The first expression, and of those overlapping it the longest ("in May 2023", not "in
    # May"; "May 7, 2023", not "May 7").
    first_end = min(match.end() for match, _ in found if match.start() == earliest)
    overlapping = [(m, resolver) for m, resolver in found if m.start() < first_end]
    return max(overlapping, key=lambda item: (item[0].end() - item[0].start(), -item[0].start()))


#: "between May and July 2023", "from 2019 to 2021", "from last March until this January".
_RANGE = re.compile(
    r"\b(?:between|from)\s+(?P<first>[^?!,;]{2,40}?)\s+(?:and|to|until|till|through|thru)\s+"
    r"(?P<second>[^?!,;]{2,40}?)(?=\s*(?:[?!,;]|\.(?:\s|$)|$)|\s+(?:and|or|but|when|while)\b)",
    re.I,
)
_NAMES_A_YEAR = re.compile(rf"\b{_YEAR}\b")


def _whole(text: str, reference: datetime) -> _Span | None:
    """The span ``text`` names when it is one time expression and nothing else; a month named
    alone is one inside a range ("between May and July")."""
    text = text.strip()
    for said in (text, f"in {text}"):
        first = _first(said)
        if first is not None and first[0].group(0).strip() == said:
            match, resolver = first
            return resolver(match, reference)
    return None


def _range(text: str, reference: datetime) -> TimeWindow | None:
    """A window between two times: from where the first begins to where the second ends. A
    side without a year takes the other's: "between May and July 2023" is May 2023, and "from
    May 2023 to July" ends in July 2023 (the first July after May 2023's start)."""
    for match in _RANGE.finditer(text):
        first, second = match["first"], match["second"]
        later = _whole(second, reference)
        if later is None:
            continue
        earlier = _whole(first, later[1] - timedelta(microseconds=1))
        if earlier is None:
            continue
        if _NAMES_A_YEAR.search(first) and not _NAMES_A_YEAR.search(second):
            bound = min(reference, earlier[0] + relativedelta(years=1) - timedelta(days=1))
            later = _whole(second, bound)
            if later is None:
                continue
        if earlier[0] < later[1]:
            return TimeWindow(start=earlier[0], end=later[1], phrase=match.group(0).strip())
    return None


def time_window(text: str, *, reference: datetime) -> TimeWindow | None:
    """The window the first time expression of ``text`` names, relative to ``reference`` (an
    aware instant), or None: no expression, one that names no real day, or a question about
    the present ("currently", "now"). Two times joined as a range ("between May and July")
    name the window from the first to the second."""
    if _NOW.search(text):
        return None
    reference = reference.astimezone(UTC)
    if (between := _range(text, reference)) is not None:
        return between
    first = _first(text)
    if first is None:
        return None
    match, resolver = first
    span = resolver(match, reference)
    if span is None:
        return None
    phrase, lead = match.group(0), match.start()
    part = _PART.search(text, 0, lead)
    if part is not None:
        span = _part_of(span, part["adverb"] or part["noun"])
        phrase, lead = text[part.start() : match.end()].strip(), part.start()
    start, end = span
    bound = _BOUND.search(text, 0, lead)
    if bound is None:
        return TimeWindow(start=start, end=end, phrase=phrase)
    word = bound.group(1).lower()
    phrase = f"{bound.group(1)} {phrase}"
    if word == "since":
        return TimeWindow(start=start, end=None, phrase=phrase)
    if word == "after":
        return TimeWindow(start=end, end=None, phrase=phrase)
    if word in ("until", "till"):
        return TimeWindow(start=None, end=end, phrase=phrase)
    return TimeWindow(start=None, end=start, phrase=phrase)


@dataclass(frozen=True)
class EventAnchor:
    """An event a question's window is anchored to: "before the move" → ``bound`` ``before``,
    ``event`` ``the move``. ``phrase``: the words it came from."""

    bound: str
    event: str
    phrase: str


#: "before the move", "after her surgery", "since she left Acme", "until John moved out".
_ANCHOR = re.compile(
    # Not a phrasal verb: "named after her grandmother", "looked after the kids".
    r"(?<!named )(?<!called )(?<!looked )(?<!look )(?<!looks )(?<!looking )(?<!takes )"
    r"(?<!take )(?<!took )(?<!asked )(?<!ask )(?<!went )(?<!go )(?<!goes )(?<!came )"
    r"\b(?P<bound>before|until|till|prior to|since|after)\s+"
    r"(?P<event>[^\W\d][^?.!,;:]{2,60}?)\s*(?=[?.!,;:]|$)",
    re.I,
)
#: Words that carry no event of their own: an anchor made only of these names nothing.
# fmt: off
_ANCHOR_FILLER = frozenset((
    "the", "a", "an", "his", "her", "their", "my", "our", "your", "its", "this", "that", "these",
    "those", "he", "she", "they", "i", "we", "you", "it", "him", "them", "me", "us", "was",
    "were", "is", "are", "had", "has", "have", "did", "do", "does", "been", "being", "then",
    "there", "time", "all",
))
# fmt: on


def event_anchor(text: str) -> EventAnchor | None:
    """The first "before/after/since/until <event>" of ``text`` whose event is words, not a
    time (a time is :func:`time_window`'s: with one in the text, there is no anchor), or None."""
    if _NOW.search(text) or _first(text) is not None:
        return None
    for match in _ANCHOR.finditer(text):
        event = " ".join(match["event"].split())
        words = [word.lower() for word in re.findall(r"[\w'’-]+", event)]
        if words and len(words) <= 8 and any(word not in _ANCHOR_FILLER for word in words):
            bound = "until" if match["bound"].lower() == "till" else match["bound"].lower()
            return EventAnchor(bound=bound, event=event, phrase=f"{match['bound']} {event}")
    return None


def anchored_window(anchor: EventAnchor, at: datetime) -> TimeWindow:
    """The window ``anchor`` names once its event is placed at ``at``: before/until/prior to
    it ends there, after/since it starts there."""
    at = at.astimezone(UTC)
    if anchor.bound in ("after", "since"):
        return TimeWindow(start=at, end=None, phrase=anchor.phrase)
    return TimeWindow(start=None, end=at, phrase=anchor.phrase)
