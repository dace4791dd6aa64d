"""Whether a statement says, in its own words, that something changed.

People mark a new value as new: "switched to VS Code", "moved to Denver", "no longer avoids
gluten", "now bikes to work", "has a new landlord". Recall reads the mark to tell a newer
value of a fact from another fact about the same thing, where the question alone does not
say it asks how things stand (:mod:`apps.memory.selectors.recall.recency`).
"""

from __future__ import annotations

import re

__all__ = ["states_a_change"]

_CUES = re.compile(
    r"\b(?:"
    # The present or a replacement named outright.
    r"now|no longer|any ?more|instead|again|new|"
    # A move from one value to another.
    r"switch(?:ed|es|ing)?|chang(?:ed|es|ing)|moved|relocated|migrated|replaced|upgraded|"
    r"downgraded|renamed|rewr(?:ote|itten)|transferred|traded|sold|bought|"
    # Something begun, ended or handed over.
    r"quit|stopped|gave up|given up|took a break|back to|cancell?ed|left|joined|started|"
    r"promoted|raised|lowered|"
    r"postponed|rescheduled|resigned|retired|stepped down|took over|taken over|"
    r"got (?:married|engaged|divorced)|broke up|separated|graduated|hired|fired|laid off|"
    r"passed away|died|adopted|dropped|became|turned"
    r")\b",
    re.IGNORECASE,
)


def states_a_change(text: str) -> bool:
    """Whether ``text`` says that something changed (a change word, not a proof of one)."""
    return _CUES.search(text) is not None
