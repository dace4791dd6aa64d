"""Relative dates resolved against the time a turn was said.

"I went there yesterday", said on 8 May 2023, becomes "… on 7 May 2023": a memory is read long
after the session, when "yesterday" means something else. Only phrases whose meaning is fixed
by the date alone are resolved; "N years ago" keeps its words and gains the year it points at
("10 years ago (2013)"), since how long ago is itself what a later question may ask.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from apps.extraction.numbers import number_value
from apps.extraction.promotion.heuristic.levels import _rx

_WEEKDAYS = [name.lower() for name in calendar.day_name]


def day_text(day: date) -> str:
    """ "7 May 2023": day, month name, year."""
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


def _month_text(year: int, month: int) -> str:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    return f"{calendar.month_name[month]} {year}"


@dataclass(frozen=True)
class Resolved:
    text: str
    #: The single day the text now names, when it names one (the memory's event time).
    day: date | None = None


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], tuple[str, date | None]]]


def _last_weekday(match: re.Match[str], said: date) -> tuple[str, date | None]:
    weekday = _WEEKDAYS.index(match.group("weekday").lower())
    back = (said.weekday() - weekday) % 7 or 7
    day = said - timedelta(days=back)
    return f"on {match.group('weekday').capitalize()}, {day_text(day)}", day


def _ago(match: re.Match[str], said: date) -> tuple[str, date | None]:
    count, unit = number_value(match.group("count")), match.group("unit").lower().rstrip("s")
    if unit == "year":
        return f"{match.group(0)} ({said.year - count})", None
    if unit == "month":
        return f"{match.group(0)} ({_month_text(said.year, said.month - count)})", None
    days = count * (7 if unit == "week" else 1)
    day = said - timedelta(days=days)
    return f"{match.group(0)} (around {day_text(day)})", day if unit == "day" else None


_NUMBER = (
    r"(?P<count>\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple(?: of)?)"
)
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_RULES: list[_Rule] = [
    (_rx(r"\bthe day before yesterday\b"), lambda m, d: _on(d - timedelta(days=2))),
    (_rx(r"\b(yesterday|last night)\b"), lambda m, d: _on(d - timedelta(days=1))),
    (_rx(r"\bthe day after tomorrow\b"), lambda m, d: _on(d + timedelta(days=2))),
    (_rx(r"\btomorrow\b"), lambda m, d: _on(d + timedelta(days=1))),
    (_rx(r"\b(today|tonight|this (morning|afternoon|evening))\b"), lambda m, d: _on(d)),
    (_rx(r"\blast weekend\b"), lambda m, d: (f"the weekend before {day_text(d)}", None)),
    (_rx(r"\bthis weekend\b"), lambda m, d: (f"the weekend of {day_text(d)}", None)),
    (_rx(r"\bnext weekend\b"), lambda m, d: (f"the weekend after {day_text(d)}", None)),
    (_rx(r"\blast week\b"), lambda m, d: (f"the week before {day_text(d)}", None)),
    (_rx(r"\bthis week\b"), lambda m, d: (f"the week of {day_text(d)}", None)),
    (_rx(r"\bnext week\b"), lambda m, d: (f"the week after {day_text(d)}", None)),
    (_rx(r"\blast month\b"), lambda m, d: (f"in {_month_text(d.year, d.month - 1)}", None)),
    (_rx(r"\bthis month\b"), lambda m, d: (f"in {_month_text(d.year, d.month)}", None)),
    (_rx(r"\bnext month\b"), lambda m, d: (f"in {_month_text(d.year, d.month + 1)}", None)),
    (_rx(r"\blast year\b"), lambda m, d: (f"in {d.year - 1}", None)),
    (_rx(r"\bthis year\b"), lambda m, d: (f"in {d.year}", None)),
    (_rx(r"\bnext year\b"), lambda m, d: (f"in {d.year + 1}", None)),
    (_rx(rf"\blast {_WEEKDAY}\b"), _last_weekday),
    (_rx(rf"\b{_NUMBER} (?P<unit>days?|weeks?|months?|years?) ago\b"), _ago),
    (
        _rx(r"\b(a few|few|several) days ago\b"),
        lambda m, d: (f"{m.group(0)} (a few days before {day_text(d)})", None),
    ),
]


def _on(day: date) -> tuple[str, date | None]:
    return f"on {day_text(day)}", day


def resolve_relative_dates(text: str, said: datetime | None) -> Resolved:
    """``text`` with every relative date phrase resolved against ``said`` (unchanged without
    it). ``day`` is set when exactly one single-day phrase was resolved."""
    if said is None:
        return Resolved(text=text)
    anchor = said.astimezone(UTC).date() if said.tzinfo is not None else said.date()
    days: list[date] = []
    for pattern, resolve in _RULES:

        def substitute(
            match: re.Match[str], resolve: Callable[..., tuple[str, date | None]] = resolve
        ) -> str:
            replacement, day = resolve(match, anchor)
            if day is not None:
                days.append(day)
            return replacement

        text = pattern.sub(substitute, text)
    # "on on 7 May": a preposition before the phrase is already in the replacement.
    text = re.sub(r"\b(on|in|during) (on|in) ", r"\2 ", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(since|from|until|till|before|after) in ", r"\1 ", text, flags=re.IGNORECASE)
    return Resolved(text=text, day=days[0] if len(set(days)) == 1 else None)
