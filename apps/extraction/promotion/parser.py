"""Fail-closed parsing of compiler output: malformed output yields no candidates, never an
exception and never a half-valid row."""

from __future__ import annotations

import json
import math
from typing import Any

from apps.extraction.promotion.types import CANDIDATE_KINDS, Candidate

MAX_CANDIDATE_CHARS = 1_000
MAX_CROSS_LINKS = 10


def _candidate(item: Any) -> Candidate | None:
    if not isinstance(item, dict):
        return None
    text, confidence = item.get("text"), item.get("confidence")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CANDIDATE_CHARS:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
        return None
    kind = item.get("kind", "fact")
    links = item.get("cross_links", [])
    if kind not in CANDIDATE_KINDS or not isinstance(links, list):
        return None
    cross_links = tuple(link for link in links if isinstance(link, str))[:MAX_CROSS_LINKS]
    return Candidate(
        text=" ".join(text.split()),
        confidence=float(confidence),
        kind=kind,
        cross_links=cross_links,
    )


def model_json(raw: str) -> object | None:
    """The JSON document of a model's raw reply, ``None`` when there is none."""
    text = raw.strip()
    if text.startswith("```"):
        # Some local models fence JSON despite being asked not to.
        text = text.strip("`")
        text = text[text.find("{") :] if "{" in text else ""
    try:
        document: object = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return document


def parse_candidates(raw: str) -> list[Candidate]:
    """Candidates from the model's raw text; anything malformed is dropped, item by item."""
    document = model_json(raw)
    if not isinstance(document, dict) or not isinstance(document.get("memories"), list):
        return []
    parsed = (_candidate(item) for item in document["memories"])
    return [candidate for candidate in parsed if candidate is not None]
