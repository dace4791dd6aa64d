"""``hybrid``, the default recall mode: the keyword leg (BM25, ``keyword.py``) and the vector
leg (``semantic.py``) over one guarded scope, fused by a convex combination of their
normalised scores (``MEMORY_RECALL_FUSION``, ``MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT``) or by
weighted reciprocal rank (``MEMORY_RECALL_RRF_K``, ``MEMORY_RECALL_*_WEIGHT``); on the local
model, the fused head is then re-ordered by late interaction (``rerank.py``,
``meta.reranked``: how many).

The keyword leg covers the subject's every row, embedded or not; the vector leg only the
embedded ones. A hit found by its words while its embedding is pending is
``keyword_pending``, and ``meta.pending_searched`` counts the pending rows in scope.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.core.db.filters import RecordFilter
from apps.core.vectors import VectorParam
from apps.extraction.state_questions import asked_attributes
from apps.memory.selectors.recall.attributes import prefer_stated_attribute
from apps.memory.selectors.recall.keyword import (
    Keywords,
    keyword_ranked_ids,
    keyword_reason,
    keyword_scopes,
)
from apps.memory.selectors.recall.rerank import (
    head_texts,
    late_interaction_scores,
    rerank_enabled,
)
from apps.memory.selectors.recall.results import (
    REASON_KEYWORD,
    REASON_KEYWORD_AND_SEMANTIC,
    REASON_SEMANTIC,
    RecallHit,
    RecallResult,
    envelope_meta,
)
from apps.memory.selectors.recall.scope import fetch_rows
from apps.memory.selectors.recall.semantic import semantic_ranking
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class Fused:
    """One memory of the fused ranking: its id, fused score and the legs that ranked it."""

    pk: uuid.UUID
    score: float
    legs: frozenset[str]


def fuse(
    semantic: Sequence[tuple[uuid.UUID, float]],
    keyword: Sequence[tuple[uuid.UUID, float]],
    limit: int,
) -> list[Fused]:
    """The fused ranking of the vector leg's ``(id, distance)`` and the keyword leg's
    ``(id, bm25)``, best first, by ``MEMORY_RECALL_FUSION``: ``convex`` (the default), a
    weighted sum of each leg's score min-max normalised over its candidates (a memory a leg
    did not return gets 0 from it), or ``rrf``, weighted reciprocal rank. Either score is
    normalised so 1.0 means "first in both legs".

    The score is not a relevance: the same memory scores differently for the same query as
    the rest of the subject changes.

    Ties (equal fused score) go to the better semantic rank, then the better keyword rank,
    then the id, so the order is total and repeatable.
    """
    # Keyed by each id's integer: a UUID hashes in Python code, and fusing hashes every
    # candidate about ten times.
    ids: dict[int, uuid.UUID] = {}
    semantic_ranks: dict[int, int] = {}
    keyword_ranks: dict[int, int] = {}
    for ranks, leg in ((semantic_ranks, semantic), (keyword_ranks, keyword)):
        for rank, (pk, _value) in enumerate(leg, start=1):
            key = pk.int
            ids[key] = pk
            ranks[key] = rank
    if settings.MEMORY_RECALL_FUSION == "rrf":
        fused = _reciprocal_rank(semantic_ranks, keyword_ranks)
    else:
        fused = _convex(semantic, keyword)
    inf = float("inf")
    order = sorted(
        ids,
        key=lambda key: (
            -fused[key],
            semantic_ranks.get(key, inf),
            keyword_ranks.get(key, inf),
            key,  # a UUID orders as its integer
        ),
    )
    return [
        Fused(
            pk=ids[key],
            score=round(fused[key], 6),
            legs=_LEGS[(key in semantic_ranks, key in keyword_ranks)],
        )
        for key in order[:limit]
    ]


_LEGS = {
    (True, False): frozenset({"semantic"}),
    (False, True): frozenset({"keyword"}),
    (True, True): frozenset({"semantic", "keyword"}),
}


def _reciprocal_rank(
    semantic_ranks: dict[int, int], keyword_ranks: dict[int, int]
) -> dict[int, float]:
    """``Σ weight_leg / (MEMORY_RECALL_RRF_K + rank_leg)``, over the best attainable sum."""
    k = settings.MEMORY_RECALL_RRF_K
    semantic_weight = settings.MEMORY_RECALL_SEMANTIC_WEIGHT
    keyword_weight = settings.MEMORY_RECALL_KEYWORD_WEIGHT
    ceiling = (semantic_weight + keyword_weight) / (k + 1)
    fused = dict.fromkeys(semantic_ranks | keyword_ranks, 0.0)
    for weight, ranks in ((semantic_weight, semantic_ranks), (keyword_weight, keyword_ranks)):
        for key, rank in ranks.items():
            fused[key] += weight / (k + rank)
    return {key: total / ceiling for key, total in fused.items()}


def _convex(
    semantic: Sequence[tuple[uuid.UUID, float]], keyword: Sequence[tuple[uuid.UUID, float]]
) -> dict[int, float]:
    """``α · similarity' + (1 − α) · c · bm25'``, each min-max normalised over its leg's
    candidates, α = ``MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT``, by each id's integer. Unlike
    ranks, the scores keep how far apart the candidates are: a leg whose first hit stands out
    lifts it further.

    ``c`` is how much the keyword leg has to say (:func:`_keyword_confidence`)."""
    alpha = settings.MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT
    fused: dict[int, float] = {}
    for weight, leg in (
        (alpha, [(pk.int, 1.0 - distance) for pk, distance in semantic]),
        ((1.0 - alpha) * _keyword_confidence(keyword), [(pk.int, bm25) for pk, bm25 in keyword]),
    ):
        if not leg:
            continue
        values = [value for _key, value in leg]
        low, high = min(values), max(values)
        for key, value in leg:
            # All candidates equal: each is as good as the leg's best.
            share = (value - low) / (high - low) if high > low else 1.0
            fused[key] = fused.get(key, 0.0) + weight * share
    return fused


def _keyword_confidence(keyword: Sequence[tuple[uuid.UUID, float]]) -> float:
    """How much the keyword leg has to say, 0 to 1. Candidates that matched only words most of
    the subject's memories hold score low and nearly alike, and min-max would stretch their
    differences of length to the whole scale: the leg counts in full when its best BM25 reaches
    ``MEMORY_RECALL_KEYWORD_CONFIDENT_BM25`` or its scores spread over
    ``MEMORY_RECALL_KEYWORD_CONFIDENT_SPREAD`` of the best (a small store's rare word: low
    scores, far apart), else in proportion to the nearer of the two."""
    scores = [score for _pk, score in keyword]
    if len(scores) < 2 or max(scores) <= 0:
        return 1.0
    best = max(scores)
    spread = (best - min(scores)) / best
    return min(
        1.0,
        max(
            best / settings.MEMORY_RECALL_KEYWORD_CONFIDENT_BM25,
            spread / settings.MEMORY_RECALL_KEYWORD_CONFIDENT_SPREAD,
        ),
    )


_REASONS = {
    frozenset({"semantic"}): REASON_SEMANTIC,
    frozenset({"keyword"}): REASON_KEYWORD,
    frozenset({"semantic", "keyword"}): REASON_KEYWORD_AND_SEMANTIC,
}


def hybrid_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    vector: Future[list[float]],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> RecallResult:
    """Both legs over one guarded scope, with the query's vector possibly still being
    embedded. Waiting for the vector can raise ``EmbeddingsUnavailable``."""
    started = time.perf_counter()
    meta: dict[str, Any] = {}
    scopes = keyword_scopes(
        tenant=tenant,
        subject_id=subject_id,
        project_id=project_id,
        include_superseded=include_superseded,
        as_of=as_of,
        narrowing=narrowing,
    )
    keywords = Keywords.of_recall(
        query=query, tenant=tenant, subject_id=subject_id, narrowing=narrowing, as_of=as_of
    )
    # The keyword leg needs no vector: it runs while the query is being embedded. Then the
    # vector leg exactly as `semantic` mode runs it (exact / ann / ann+exact), deeper; both
    # legs rank ids, and only the fused winners' rows are read.
    fetch = max(limit, settings.MEMORY_RECALL_FUSION_CANDIDATES)
    keyword = keyword_ranked_ids(scopes.any, keywords, fetch)
    query_vector = vector.result()
    leg = semantic_ranking(
        tenant=tenant,
        subject_id=subject_id,
        vector=query_vector,
        project_id=project_id,
        limit=fetch,
        include_superseded=include_superseded,
        as_of=as_of,
        narrowing=narrowing,
    )
    for key in ("ann_iterative_scan", "ann_iterative_scan_reason"):
        if key in leg.meta:
            meta[key] = leg.meta[key]
    reranking = rerank_enabled()
    asked = asked_attributes(query) if settings.MEMORY_RECALL_ATTRIBUTE_FIRST > 0 else frozenset()
    reordering = reranking or bool(asked)
    depth = max(limit, settings.MEMORY_RECALL_RERANK_CANDIDATES) if reordering else limit
    winners = fuse(leg.ranked, keyword, depth)
    if reordering:
        # The head's texts alone (a narrow read), then the full rows of the final winners.
        legs = {winner.pk: winner.legs for winner in winners}
        texts = head_texts(scopes.any, [winner.pk for winner in winners])
        reordered = [(winner.pk, winner.score) for winner in winners]
        if reranking:
            reordered = late_interaction_scores(query, reordered, texts)
            meta["reranked"] = min(len(reordered), settings.MEMORY_RECALL_RERANK_CANDIDATES)
        if asked:
            reordered = prefer_stated_attribute(query, asked, reordered, texts)
        winners = [Fused(pk=pk, score=score, legs=legs[pk]) for pk, score in reordered[:limit]]
    memories, similarities, pending = fetch_rows(
        scopes.any,
        [winner.pk for winner in winners],
        counting=scopes.pending,
        vector=VectorParam(query_vector),
        embedding_model=leg.embedding_model,
    )
    results = [
        RecallHit(
            memory=memories[winner.pk],
            score=winner.score,
            selection_reason=keyword_reason(memories[winner.pk], _REASONS[winner.legs]),
            similarity=similarities[winner.pk],
        )
        # A winner forgotten between the ranking and this read is left out, not faked.
        for winner in winners
        if winner.pk in memories
    ]
    meta.update(
        envelope_meta(results=results, limit=limit, strategy=leg.strategy, pending_searched=pending)
    )
    meta["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return RecallResult(results=results, meta=meta)
