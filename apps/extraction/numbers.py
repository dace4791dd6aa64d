"""Counts as people write them: digits or number words ("three weeks ago", "two dogs")."""

from __future__ import annotations

from typing import Final

#: Number words from one to twelve.
CARDINALS: Final = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
#: "No dogs", "zero cats".
NONE: Final = {"no": 0, "zero": 0}
#: "A week ago", "a couple of days": an article or "a couple" for one or two.
INDEFINITE: Final = {"a": 1, "an": 1, "a couple of": 2, "a couple": 2, "couple of": 2}

_VALUES: Final = {**NONE, **INDEFINITE, **CARDINALS}


def number_value(text: str) -> int:
    """The value of a count as written: digits, or any word of the tables above."""
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _VALUES[text]
