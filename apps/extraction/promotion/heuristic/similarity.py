"""Word tokens, light stemming and Jaccard similarity between statements.

Shared by scoring (how many content words a rewritten statement keeps) and by the merge step
(near-duplicates, restatements, statements superseded by a correction).
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _words

_STOPWORDS = _words(
    "a an the is are was were be to of in on at for and or but with by from as it its this "
    "that these those so not no than"
)
_PRONOUNS = _words("user user's team team's they them their it its he she")
_SUFFIXES = ("'s", "ing", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9.+/'-]*[a-z0-9]|[a-z0-9]", text.lower())
    return {_stem(word) for word in words} - _STOPWORDS


def _jaccard(left: set[str], right: set[str]) -> float:
    return len(left & right) / len(left | right) if left and right else 0.0
