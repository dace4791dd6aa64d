"""``meta.answer_confidence``: are this query's results answers, or just nearest neighbours?

Semantic search has no no-answer mode: a query about sourdough still gets the wiki's nearest
articles back, ranked and scored. A constant floor on the score cannot tell the two apart
(the measured bands overlap, and any floor breaks with the next model, fusion or corpus), so
the verdict is the *separation within this query's own pool*: how many robust standard
deviations the best score stands above the rest,

    separation = (top - median(rest)) / (1.4826 * MAD(rest))

which is unchanged by any shift or scale of the scores. A relevant query has one (or a few)
rows standing clear of a flat background; a junk query's scores decay smoothly. The two
cut-offs are settings measured on the calibration corpus (docs/knowledge.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

ANSWER = "answer"
WEAK = "weak"
NONE = "none"
#: Reported instead of infinity when the rest of the pool is perfectly flat.
MAX_SEPARATION = 99.0
_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class AnswerConfidence:
    verdict: str
    #: None when the pool was too small to measure.
    separation: float | None


def score_separation(scores: Sequence[float]) -> float | None:
    """Robust z of the top score against the rest; None for fewer than
    ``KNOWLEDGE_ANSWER_MIN_ROWS`` scores."""
    ordered = sorted(scores, reverse=True)
    if len(ordered) < settings.KNOWLEDGE_ANSWER_MIN_ROWS:
        return None
    top, rest = ordered[0], ordered[1:]
    centre = statistics.median(rest)
    spread = _MAD_TO_SIGMA * statistics.median(abs(score - centre) for score in rest)
    if spread <= 0:
        # More than half the rest tie exactly: fall back to the plain deviation.
        spread = statistics.pstdev(rest)
    if spread <= 0:
        return MAX_SEPARATION if top > centre else 0.0
    return min(MAX_SEPARATION, (top - centre) / spread)


def answer_confidence(*, scores: Sequence[float], curated: bool) -> AnswerConfidence:
    """The verdict for one query's pool of scores (best first or not; order is irrelevant).

    ``answer``: a curated article matched, or the top stands at least
    ``KNOWLEDGE_ANSWER_SEPARATION`` above the rest. ``weak``: at least
    ``KNOWLEDGE_WEAK_SEPARATION``, or too few rows to measure. ``none``: nothing came back,
    or nothing stands out from the nearest-neighbour background.
    """
    separation = score_separation(scores)
    if curated:
        return AnswerConfidence(verdict=ANSWER, separation=separation)
    if not scores:
        return AnswerConfidence(verdict=NONE, separation=None)
    if separation is None:
        return AnswerConfidence(verdict=WEAK, separation=None)
    if separation >= settings.KNOWLEDGE_ANSWER_SEPARATION:
        verdict = ANSWER
    elif separation >= settings.KNOWLEDGE_WEAK_SEPARATION:
        verdict = WEAK
    else:
        verdict = NONE
    return AnswerConfidence(verdict=verdict, separation=round(separation, 3))
