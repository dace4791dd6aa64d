"""Which statements say, in their own words, that something changed."""

from __future__ import annotations

import pytest

from apps.extraction.change_cues import states_a_change


@pytest.mark.parametrize(
    "text",
    [
        "I've switched to VS Code.",
        "The company moved its office to Amsterdam.",
        "The user no longer avoids gluten.",
        "The user now bikes to work.",
        "The user has a new landlord, Ms. Ortiz.",
        "Omar stepped down as team lead and Lucia took over.",
        "The cluster was upgraded to Kubernetes 1.29.",
        "Jamal and Nina got married in June.",
        "Melanie took a break from pottery.",
    ],
)
def test_a_statement_of_change(text):
    assert states_a_change(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user takes the bus to work.",
        "Melanie showed her pottery to her friends.",
        "Priya flew to Seattle for a conference.",
        "The newsletter goes out on Fridays.",
        "Nowhere is quieter than the lake.",
    ],
)
def test_a_statement_of_how_things_are(text):
    assert not states_a_change(text)
