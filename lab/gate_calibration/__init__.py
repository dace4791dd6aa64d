"""The calibration corpus and its measurement, behind ``knowledge_gate_calibrate`` and
docs/knowledge.md. Used by the tests too, so the documented figures and the tested behaviour
come from the same texts. Nothing here is read at request time.
"""

from lab.gate_calibration.corpus import (
    CORPUS,
    IDENTIFIER_QUERIES,
    JUNK_QUERIES,
    LIGHT_EDIT_PAIRS,
    NEAR_PAIRS,
    PARAPHRASE_PAIRS,
    RELEVANT_QUERIES,
    UNRELATED_PAIRS,
    CorpusArticle,
    TextPair,
)
from lab.gate_calibration.measure import (
    PAIR_SETS,
    CalibrationFigures,
    PairFigure,
    QueryFigure,
    corpus_text,
    measure,
)

__all__ = [
    "CORPUS",
    "IDENTIFIER_QUERIES",
    "JUNK_QUERIES",
    "LIGHT_EDIT_PAIRS",
    "NEAR_PAIRS",
    "PAIR_SETS",
    "PARAPHRASE_PAIRS",
    "RELEVANT_QUERIES",
    "UNRELATED_PAIRS",
    "CalibrationFigures",
    "CorpusArticle",
    "PairFigure",
    "QueryFigure",
    "TextPair",
    "corpus_text",
    "measure",
]
