"""Time words in a question, resolved to a window relative to a reference instant: each kind of
phrase, the month and year boundaries, and what is not a time at all."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.extraction.time_words import (
    EventAnchor,
    TimeWindow,
    anchored_window,
    event_anchor,
    time_window,
)

# A Saturday in December, early in the morning (UTC).
REFERENCE = datetime(2026, 12, 5, 3, 30, tzinfo=UTC)


def _d(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def _window(text: str, reference: datetime = REFERENCE) -> tuple[object, object, str] | None:
    window = time_window(text, reference=reference)
    return None if window is None else (window.start, window.end, window.phrase)


@pytest.mark.parametrize(
    ("_case", "text", "expected"),
    [
        # Absolute dates, months and years.
        (
            "iso_date",
            "what happened on 2023-05-07?",
            (_d(2023, 5, 7), _d(2023, 5, 8), "2023-05-07"),
        ),
        (
            "day_month_year",
            "what did she do on 7 May 2023",
            (_d(2023, 5, 7), _d(2023, 5, 8), "on 7 May 2023"),
        ),
        (
            "month_day_year",
            "where was he on May 7th, 2023?",
            (_d(2023, 5, 7), _d(2023, 5, 8), "on May 7th, 2023"),
        ),
        (
            "ordinal_of_month",
            "what did she eat on the 3rd of March",
            (_d(2026, 3, 3), _d(2026, 3, 4), "on the 3rd of March"),
        ),
        ("day_month_this_year", "on 7 May", (_d(2026, 5, 7), _d(2026, 5, 8), "on 7 May")),
        ("abbreviated_month", "Sept 2023", (_d(2023, 9, 1), _d(2023, 10, 1), "Sept 2023")),
        (
            "month_year",
            "where did she live in May 2023?",
            (_d(2023, 5, 1), _d(2023, 6, 1), "in May 2023"),
        ),
        ("year", "what happened in 2022?", (_d(2022, 1, 1), _d(2023, 1, 1), "in 2022")),
        ("bare_year", "her 2019 trip", (_d(2019, 1, 1), _d(2020, 1, 1), "2019")),
        # Named months and seasons, relative to the reference.
        ("last_month_name", "last May", (_d(2026, 5, 1), _d(2026, 6, 1), "last May")),
        ("in_month_name", "in December", (_d(2026, 12, 1), _d(2027, 1, 1), "in December")),
        ("last_same_month", "last December", (_d(2025, 12, 1), _d(2026, 1, 1), "last December")),
        (
            "last_spring",
            "where did Maria work last spring?",
            (_d(2026, 3, 1), _d(2026, 6, 1), "last spring"),
        ),
        ("last_summer", "last summer", (_d(2026, 6, 1), _d(2026, 9, 1), "last summer")),
        ("last_autumn", "last autumn", (_d(2026, 9, 1), _d(2026, 12, 1), "last autumn")),
        ("last_fall", "what did we ship last fall", (_d(2026, 9, 1), _d(2026, 12, 1), "last fall")),
        # December is winter: the last winter is the one before it.
        ("last_winter", "last winter", (_d(2025, 12, 1), _d(2026, 3, 1), "last winter")),
        ("this_winter", "this winter", (_d(2026, 12, 1), _d(2027, 3, 1), "this winter")),
        (
            "season_of_year",
            "in the summer of 2023",
            (_d(2023, 6, 1), _d(2023, 9, 1), "in the summer of 2023"),
        ),
        ("winter_of_year", "winter 2022", (_d(2022, 12, 1), _d(2023, 3, 1), "winter 2022")),
        # Calendar units.
        ("last_year", "last year", (_d(2025, 1, 1), _d(2026, 1, 1), "last year")),
        ("this_year", "this year", (_d(2026, 1, 1), _d(2027, 1, 1), "this year")),
        ("last_month", "last month", (_d(2026, 11, 1), _d(2026, 12, 1), "last month")),
        # Weeks start on Monday: the reference's week began on Monday 30 November.
        ("last_week", "last week", (_d(2026, 11, 23), _d(2026, 11, 30), "last week")),
        ("yesterday", "yesterday", (_d(2026, 12, 4), _d(2026, 12, 5), "yesterday")),
        ("today", "today", (_d(2026, 12, 5), _d(2026, 12, 6), "today")),
        (
            "day_before_yesterday",
            "the day before yesterday",
            (_d(2026, 12, 3), _d(2026, 12, 4), "the day before yesterday"),
        ),
        # N units ago: the calendar unit holding the reference minus N units.
        ("days_ago", "3 days ago", (_d(2026, 12, 2), _d(2026, 12, 3), "3 days ago")),
        ("weeks_ago_words", "two weeks ago", (_d(2026, 11, 16), _d(2026, 11, 23), "two weeks ago")),
        ("a_month_ago", "a month ago", (_d(2026, 11, 1), _d(2026, 12, 1), "a month ago")),
        (
            "couple_of_months_ago",
            "a couple of months ago",
            (_d(2026, 10, 1), _d(2026, 11, 1), "a couple of months ago"),
        ),
        ("years_ago", "5 years ago", (_d(2021, 1, 1), _d(2022, 1, 1), "5 years ago")),
        # The last N units: a rolling span up to the reference.
        (
            "past_weeks",
            "in the past two weeks",
            (datetime(2026, 11, 21, 3, 30, tzinfo=UTC), REFERENCE, "in the past two weeks"),
        ),
        # Open ends.
        ("since", "since May 2023", (_d(2023, 5, 1), None, "since May 2023")),
        ("after", "after last summer", (_d(2026, 9, 1), None, "after last summer")),
        ("before", "before 2022", (None, _d(2022, 1, 1), "before 2022")),
        ("until", "until June 2024", (None, _d(2024, 7, 1), "until June 2024")),
        # A part of the period: a third, or a half, in whole days.
        ("early_year", "in early 2025", (_d(2025, 1, 1), _d(2025, 5, 2), "in early 2025")),
        ("mid_year", "mid-2025", (_d(2025, 5, 2), _d(2025, 9, 1), "mid-2025")),
        (
            "end_of_year",
            "at the end of 2024",
            (_d(2024, 9, 1), _d(2025, 1, 1), "at the end of 2024"),
        ),
        (
            "start_of_this_year",
            "at the start of the year",
            (_d(2026, 1, 1), _d(2026, 5, 2), "at the start of the year"),
        ),
        (
            "first_half",
            "in the first half of 2025",
            (_d(2025, 1, 1), _d(2025, 7, 2), "in the first half of 2025"),
        ),
        (
            "beginning_of_a_month",
            "at the beginning of March",
            (_d(2026, 3, 1), _d(2026, 3, 11), "at the beginning of March"),
        ),
        ("mid_month", "in mid-June", (_d(2026, 6, 11), _d(2026, 6, 21), "in mid-June")),
        (
            "before_the_end",
            "before the end of 2024",
            (None, _d(2024, 9, 1), "before the end of 2024"),
        ),
        ("a_quarter", "in Q2 2025", (_d(2025, 4, 1), _d(2025, 7, 1), "in Q2 2025")),
        ("a_quarter_begun", "in Q1", (_d(2026, 1, 1), _d(2026, 4, 1), "in Q1")),
        # "start" as a verb is no part: the whole year.
        ("start_a_verb", "start one year ago", (_d(2025, 1, 1), _d(2026, 1, 1), "one year ago")),
        (
            "a_few_units_ago",
            "what did I do a few weeks ago?",
            (_d(2026, 11, 2), _d(2026, 11, 23), "a few weeks ago"),
        ),
        (
            "several_units_ago",
            "several months ago",
            (_d(2026, 6, 1), _d(2026, 11, 1), "several months ago"),
        ),
        # Ranges: from where the first begins to where the second ends.
        (
            "range_year_on_the_second",
            "what did she do between May and July 2023?",
            (_d(2023, 5, 1), _d(2023, 8, 1), "between May and July 2023"),
        ),
        (
            "range_year_on_the_first",
            "what happened from May 2023 to July?",
            (_d(2023, 5, 1), _d(2023, 8, 1), "from May 2023 to July"),
        ),
        (
            "range_of_years",
            "where did he live from 2019 to 2021?",
            (_d(2019, 1, 1), _d(2022, 1, 1), "from 2019 to 2021"),
        ),
        (
            "range_across_a_new_year",
            "from December to February",
            (_d(2025, 12, 1), _d(2026, 3, 1), "from December to February"),
        ),
        (
            "range_of_days",
            "between March 3 and March 10",
            (_d(2026, 3, 3), _d(2026, 3, 11), "between March 3 and March 10"),
        ),
        (
            "range_of_places_is_none",
            "did she move from Boston to Denver in 2021?",
            (_d(2021, 1, 1), _d(2022, 1, 1), "in 2021"),
        ),
        # The first expression wins.
        (
            "first_wins",
            "in 2021, or was it last year?",
            (_d(2021, 1, 1), _d(2022, 1, 1), "in 2021"),
        ),
    ],
)
def test_each_kind_of_phrase_resolves_to_its_window(_case, text, expected):
    assert _window(text) == expected


@pytest.mark.parametrize(
    ("_case", "reference", "text", "expected"),
    [
        # Across the year boundary.
        ("last_month_in_january", _d(2027, 1, 15), "last month", (_d(2026, 12, 1), _d(2027, 1, 1))),
        (
            "last_week_across_new_year",
            _d(2027, 1, 1),
            "last week",
            (_d(2026, 12, 21), _d(2026, 12, 28)),
        ),
        ("yesterday_on_new_year", _d(2027, 1, 1), "yesterday", (_d(2026, 12, 31), _d(2027, 1, 1))),
        (
            "last_winter_in_january",
            _d(2027, 1, 10),
            "last winter",
            (_d(2025, 12, 1), _d(2026, 3, 1)),
        ),
        ("in_winter_in_january", _d(2027, 1, 10), "in winter", (_d(2026, 12, 1), _d(2027, 3, 1))),
        # A named month: "in" the latest begun, "last" the latest before the reference's month.
        ("in_may_during_may", _d(2026, 5, 20), "in May", (_d(2026, 5, 1), _d(2026, 6, 1))),
        ("last_may_during_may", _d(2026, 5, 20), "last May", (_d(2025, 5, 1), _d(2025, 6, 1))),
        ("last_may_in_april", _d(2026, 4, 2), "last May", (_d(2025, 5, 1), _d(2025, 6, 1))),
        # A day without a year: the latest one not after the reference.
        ("future_day_is_last_years", _d(2026, 3, 1), "on 7 May", (_d(2025, 5, 7), _d(2025, 5, 8))),
        ("leap_day", _d(2026, 3, 1), "Feb 29", (_d(2024, 2, 29), _d(2024, 3, 1))),
        # Month arithmetic: a month before 31 March is February, whatever its length.
        (
            "month_ago_end_of_march",
            _d(2026, 3, 31),
            "a month ago",
            (_d(2026, 2, 1), _d(2026, 3, 1)),
        ),
        # The spring a reference in spring means is the previous one.
        ("last_spring_in_spring", _d(2026, 4, 1), "last spring", (_d(2025, 3, 1), _d(2025, 6, 1))),
        ("last_spring_in_june", _d(2026, 6, 1), "last spring", (_d(2026, 3, 1), _d(2026, 6, 1))),
    ],
)
def test_windows_are_relative_to_the_reference(_case, reference, text, expected):
    window = time_window(text, reference=reference)

    assert window is not None
    assert (window.start, window.end) == expected


def test_a_reference_with_an_offset_is_read_in_utc():
    # 00:30 on 1 January in Berlin is still 31 December in UTC.
    berlin = datetime.fromisoformat("2027-01-01T00:30:00+01:00")

    assert _window("yesterday", berlin) == (_d(2026, 12, 30), _d(2026, 12, 31), "yesterday")


@pytest.mark.parametrize(
    "text",
    [
        "Where does Maria work now?",
        "Where does Maria currently work?",
        "what does she eat these days, not last year",
        "what is the user's diet at the moment",
        "Where does Maria work?",
        "May I ask where Maria works?",
        "she may go",
        "did she fall off the bike?",
        "how does the user spend spring weekends",
        "on 31 June",
        "room 12345",
        "did she go from happy to sad?",
        "what did he do between jobs?",
        "from 9 to 5",
        "between now and July",
    ],
)
def test_no_window_for_the_present_or_for_no_time(text):
    assert time_window(text, reference=REFERENCE) is None


def test_the_window_is_a_value():
    window = time_window("last year", reference=REFERENCE)

    assert window == TimeWindow(start=_d(2025, 1, 1), end=_d(2026, 1, 1), phrase="last year")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Where did Maria work before the move?",
            EventAnchor(bound="before", event="the move", phrase="before the move"),
        ),
        (
            "Where did she live since she left Acme?",
            EventAnchor(bound="since", event="she left Acme", phrase="since she left Acme"),
        ),
        (
            "Was James lonely before meeting Samantha?",
            EventAnchor(bound="before", event="meeting Samantha", phrase="before meeting Samantha"),
        ),
        (
            "What did he eat till the surgery",
            EventAnchor(bound="until", event="the surgery", phrase="till the surgery"),
        ),
        # A time is time_window's; the present and pronouns alone name no event.
        ("What did Maria do before April 10, 2023?", None),
        ("Where does Maria work now, after the move?", None),
        ("What happened after that?", None),
        ("How long has it been since then?", None),
        ("Where does Maria work?", None),
        ("Who is the puppy named after her grandmother?", None),
        ("Who looked after the kids?", None),
    ],
)
def test_an_event_in_place_of_a_time_is_read_as_an_anchor(text, expected):
    assert event_anchor(text) == expected


def test_an_anchored_window_ends_or_starts_at_the_event():
    at = datetime(2025, 6, 1, 12, tzinfo=UTC)
    before = EventAnchor(bound="before", event="the move", phrase="before the move")
    after = EventAnchor(bound="after", event="the move", phrase="after the move")

    assert anchored_window(before, at) == TimeWindow(start=None, end=at, phrase="before the move")
    assert anchored_window(after, at) == TimeWindow(start=at, end=None, phrase="after the move")
