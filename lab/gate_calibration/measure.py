"""Measuring the calibration corpus with an embedding function (no database)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from apps.knowledge.selectors import answer_confidence
from lab.gate_calibration.corpus import (
    CORPUS,
    JUNK_QUERIES,
    LIGHT_EDIT_PAIRS,
    NEAR_PAIRS,
    PARAPHRASE_PAIRS,
    RELEVANT_QUERIES,
    UNRELATED_PAIRS,
    CorpusArticle,
    TextPair,
)


class PairFigure(NamedTuple):
    kind: str
    label: str
    similarity: float


class QueryFigure(NamedTuple):
    kind: str  # "relevant" | "junk"
    query: str
    expected: str | None
    top_title: str
    top_similarity: float
    separation: float | None
    verdict: str


class CalibrationFigures(NamedTuple):
    pairs: list[PairFigure]
    corpus_nearest: list[float]
    queries: list[QueryFigure]


PAIR_SETS: tuple[tuple[str, tuple[TextPair, ...]], ...] = (
    ("light_edit", LIGHT_EDIT_PAIRS),
    ("paraphrase", PARAPHRASE_PAIRS),
    ("near_conflict", NEAR_PAIRS),
    ("unrelated", UNRELATED_PAIRS),
)


def corpus_text(article: CorpusArticle) -> str:
    return f"{article.title}\n\n{article.body}"


def measure(
    embed: Callable[[list[str]], list[list[float]]],
    *,
    embed_queries: Callable[[list[str]], list[list[float]]] | None = None,
    pool: int = 20,
) -> CalibrationFigures:
    """Cosine similarities of every pair, each corpus article's nearest other article, and
    the answer_confidence separation of every query over its top-``pool`` articles (the same
    pool size search measures on). Queries go through ``embed_queries`` when given: search
    embeds them with the provider's query encoder, not the one that stored the articles."""
    pairs: list[PairFigure] = []
    for kind, pair_set in PAIR_SETS:
        first = np.asarray(embed([pair.first for pair in pair_set]))
        second = np.asarray(embed([pair.second for pair in pair_set]))
        for pair, a, b in zip(pair_set, first, second, strict=True):
            pairs.append(PairFigure(kind, pair.label, float(a @ b)))
    docs = np.asarray(embed([corpus_text(article) for article in CORPUS]))
    similarity = docs @ docs.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = [float(value) for value in similarity.max(axis=1)]
    queries: list[QueryFigure] = []
    cases = [("relevant", query, title) for query, title in RELEVANT_QUERIES] + [
        ("junk", query, None) for query in JUNK_QUERIES
    ]
    vectors = np.asarray((embed_queries or embed)([query for _, query, _ in cases]))
    for (kind, query, expected), vector in zip(cases, vectors, strict=True):
        scores = docs @ vector
        order = np.argsort(-scores)[:pool]
        verdict = answer_confidence(scores=[float(scores[i]) for i in order], curated=False)
        queries.append(
            QueryFigure(
                kind=kind,
                query=query,
                expected=expected,
                top_title=CORPUS[int(order[0])].title,
                top_similarity=float(scores[order[0]]),
                separation=verdict.separation,
                verdict=verdict.verdict,
            )
        )
    return CalibrationFigures(pairs=pairs, corpus_nearest=nearest, queries=queries)
