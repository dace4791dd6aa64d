"""The keyword ranking (Okapi BM25 in SQL) and its fusion with the vector ranking.

* ``keyword`` — Okapi BM25 over the stored tsvector (``search_vector``: text weight A, the
  memory's retrieval ``context`` weight B, the context the service derived weight C; a row
  has at most one of the two contexts, and both count as context), computed in SQL over the
  recall's compiled scope:
  the question's lexemes OR'd, IDF from the subject's own rows, so a name that appears in
  every other memory weighs little and a rare word a lot;
* ``hybrid`` — both legs, fused by weighted reciprocal rank (``MEMORY_RECALL_RRF_K``,
  ``MEMORY_RECALL_*_WEIGHT``).

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
from typing import Any

from django.conf import settings

from apps.core.vectors import VectorParam
from apps.memory.models import MEMORY_TEXT_SEARCH_CONFIG, Memory
from apps.memory.selectors.recall.results import (
    REASON_KEYWORD,
    REASON_KEYWORD_AND_SEMANTIC,
    REASON_KEYWORD_PENDING,
    REASON_SEMANTIC,
    STRATEGY_KEYWORD,
    RecallHit,
    RecallResult,
    envelope_meta,
)
from apps.memory.selectors.recall.scope import (
    ROWS_ANY,
    ROWS_EMBEDDED,
    ROWS_PENDING,
    CompiledScope,
    count_rows,
    fetch_rows,
    fetch_scored,
    fetch_values,
    quote,
    recall_scope,
    select_list,
)
from apps.memory.selectors.recall.semantic import semantic_ranking
from apps.tenancy.models import Tenant


def _bm25_sql(
    scope: CompiledScope,
    fetch: int,
    population: Sequence[CompiledScope] = (),
    *,
    rows: bool = True,
) -> tuple[str, list[Any]]:
    """Okapi BM25 over ``search_vector`` for the rows in ``scope``, best first (one statement).

    The query's lexemes (parsed with the column's own config: stemmed, stop words dropped)
    are OR'd, so a natural-language question matches any of its words. Only rows matching
    some lexeme are read (the GIN index, or the scope's btree and a filter); IDF counts the
    matching rows per lexeme against the scope's size. A lexeme's frequency counts each
    occurrence in the text as 1 and in the context as ``MEMORY_RECALL_CONTEXT_TERM_WEIGHT``;
    the document length is its number of distinct lexemes, normalised by the matching rows'
    mean (cheaper than the whole scope's, and measured no worse). Scores are rounded to 12
    decimals before ordering: rows with the same terms tie exactly, and go by id, instead of
    by the last bit of a sum whose order the hash aggregate picks.

    Counting occurrences means unnesting a document's every lexeme, which on a subject whose
    name is in every memory is every matching row's (~60 lexemes each with a retrieval
    context). So the ranking runs in two passes: every matching row is first scored with
    each lexeme's *presence* in the text and in the context (two ``@@`` tests per lexeme on
    a document detoasted once), and only the best ``MEMORY_RECALL_KEYWORD_POOL_PER_RESULT``
    × ``fetch`` of them are unnested and scored with their exact frequencies. On LoCoMo the
    final top 50 is the one-pass ranking's (recall@5..50 equal to 3 decimals) at a third to
    two thirds of the time (docs/memory.md, "Recall modes").

    ``population``: disjoint scopes whose row counts sum to ``scope``'s, counted instead of it
    (embedded + pending rows: each count is an index-only scan of its partial index, where
    the union of both has no index of its own).

    The statement needs no query vector, so ``hybrid`` runs it while the query is embedded.
    Without ``rows`` it returns each row's id instead of its columns.
    """
    table, pk = scope.table, quote(scope.using, "id")
    parts = list(population) or [scope]
    population_sql = " + ".join(
        f"(SELECT count(*) FROM {table} WHERE {part.where})"  # noqa: S608
        for part in parts
    )
    vector = f"{table}.{quote(scope.using, 'search_vector')}"
    columns = select_list(scope.using) if rows else f"{table}.{pk}"
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    sql = f"""
        WITH terms AS (
            SELECT lexeme, (quote_literal(lexeme) || ':A')::tsquery AS in_text,
                   (quote_literal(lexeme) || ':BC')::tsquery AS in_context
              FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector(%s::regconfig, %s))) AS parsed
        ), matched AS MATERIALIZED (
            -- `|| ''` keeps a detoasted copy: each document is tested once per lexeme below.
            SELECT {table}.{pk} AS id, {vector} || ''::tsvector AS document FROM {table}
             WHERE {scope.where} AND {vector} @@ (
                   SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM terms)
        ), population AS (
            SELECT ({population_sql})::float8 AS rows
        ), presence AS MATERIALIZED (
            SELECT * FROM (
                SELECT matched.id, terms.lexeme, length(matched.document)::float8 AS length,
                       ((matched.document @@ terms.in_text)::int
                        + %s * (matched.document @@ terms.in_context)::int)::float8 AS frequency
                  FROM matched CROSS JOIN terms
            ) AS tested WHERE frequency > 0
        ), weights AS (
            SELECT counted.lexeme,
                   ln(1 + (population.rows - counted.rows + 0.5) / (counted.rows + 0.5)) AS idf,
                   greatest(shape.mean_length, 1) AS mean_length
              FROM (SELECT lexeme, count(*)::float8 AS rows FROM presence GROUP BY lexeme)
                   AS counted
             CROSS JOIN population
             CROSS JOIN (SELECT avg(length(document))::float8 AS mean_length FROM matched)
                   AS shape
        ), pool AS MATERIALIZED (
            SELECT presence.id FROM presence JOIN weights USING (lexeme)
             GROUP BY presence.id
             ORDER BY round(sum(weights.idf * presence.frequency * (%s + 1)
                                / (presence.frequency
                                   + %s * (1 - %s + %s * presence.length / weights.mean_length))
                            )::numeric, 12) DESC, presence.id
             LIMIT %s
        ), hits AS MATERIALIZED (
            -- Each pooled document is unnested once, from its copy in `matched`; the lexemes
            -- are tested against an array, so no plan can unnest a document once per term.
            SELECT matched.id, term.lexeme, length(matched.document)::float8 AS length,
                   (SELECT sum(CASE weight WHEN 'A' THEN 1.0 ELSE %s END)
                      FROM unnest(term.weights) AS weight)::float8 AS frequency
              FROM pool JOIN matched USING (id)
                   CROSS JOIN LATERAL unnest(matched.document) AS term
             WHERE term.lexeme = ANY ((SELECT array_agg(lexeme) FROM terms)::text[])
        ), ranked AS (
            SELECT hits.id, round(sum(weights.idf * hits.frequency * (%s + 1)
                       / (hits.frequency
                          + %s * (1 - %s + %s * hits.length / weights.mean_length))
                   )::numeric, 12)::float8 AS keyword_score
              FROM hits JOIN weights USING (lexeme)
             GROUP BY hits.id ORDER BY keyword_score DESC, hits.id LIMIT %s
        )
        SELECT {columns}, ranked.keyword_score FROM {table}
          JOIN ranked ON ranked.id = {table}.{pk}
         WHERE {scope.where} ORDER BY ranked.keyword_score DESC, {table}.{pk}
    """  # noqa: S608
    k1, b = settings.MEMORY_RECALL_BM25_K1, settings.MEMORY_RECALL_BM25_B
    context_weight = settings.MEMORY_RECALL_CONTEXT_TERM_WEIGHT
    pool = fetch * max(1, settings.MEMORY_RECALL_KEYWORD_POOL_PER_RESULT)
    params: list[Any] = [
        *scope.params,  # matched
        *(param for part in parts for param in part.params),  # population
        context_weight,  # presence
        *(k1, k1, b, b, pool),  # pool
        context_weight,  # hits
        *(k1, k1, b, b, fetch),  # ranked
        *scope.params,  # the rows
    ]
    return sql, params


def keyword_ranking(
    scope: CompiledScope,
    query: str,
    fetch: int,
    population: Sequence[CompiledScope] = (),
) -> list[tuple[Memory, float]]:
    """The scope's top-``fetch`` rows by BM25 for ``query`` (rows matching no word: none), as
    ``(memory, bm25)``."""
    sql, params = _bm25_sql(scope, fetch, population)
    rows = fetch_scored(scope, sql, [MEMORY_TEXT_SEARCH_CONFIG, query, *params])
    return [(memory, float(score)) for memory, (score,) in rows]


def keyword_ranked_ids(
    scope: CompiledScope,
    query: str,
    fetch: int,
    population: Sequence[CompiledScope],
) -> list[tuple[uuid.UUID, float]]:
    """:func:`keyword_ranking` as ``(id, bm25)``, without reading the rows: the keyword leg
    of ``hybrid``, whose rows only matter for the fused winners."""
    sql, params = _bm25_sql(scope, fetch, population, rows=False)
    return [
        (pk, float(score))
        for pk, score in fetch_values(scope, sql, [MEMORY_TEXT_SEARCH_CONFIG, query, *params])
    ]


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
    """Weighted reciprocal rank fusion of the vector leg's ``(id, distance)`` and the keyword
    leg's ``(id, bm25)``, best first; the score is normalised so 1.0 means "first in both".

    The score is a rank, not a relevance: the same memory scores differently for the same
    query as the rest of the subject changes.

    Ties (equal fused score) go to the better semantic rank, then the better keyword rank,
    then the id, so the order is total and repeatable.
    """
    k = settings.MEMORY_RECALL_RRF_K
    weights = {
        "semantic": settings.MEMORY_RECALL_SEMANTIC_WEIGHT,
        "keyword": settings.MEMORY_RECALL_KEYWORD_WEIGHT,
    }
    ranks: dict[uuid.UUID, dict[str, int]] = {}
    for rank, (pk, _distance) in enumerate(semantic, start=1):
        ranks.setdefault(pk, {})["semantic"] = rank
    for rank, (pk, _score) in enumerate(keyword, start=1):
        ranks.setdefault(pk, {})["keyword"] = rank
    ceiling = sum(weights.values()) / (k + 1)

    def fused(pk: uuid.UUID) -> float:
        return sum(weights[leg] / (k + rank) for leg, rank in ranks[pk].items()) / ceiling

    inf = float("inf")
    order = sorted(
        ranks,
        key=lambda pk: (
            -fused(pk),
            ranks[pk].get("semantic", inf),
            ranks[pk].get("keyword", inf),
            str(pk),
        ),
    )
    return [
        Fused(pk=pk, score=round(fused(pk), 6), legs=frozenset(ranks[pk])) for pk in order[:limit]
    ]


_REASONS = {
    frozenset({"semantic"}): REASON_SEMANTIC,
    frozenset({"keyword"}): REASON_KEYWORD,
    frozenset({"semantic", "keyword"}): REASON_KEYWORD_AND_SEMANTIC,
}


def _keyword_reason(memory: Memory, reason: str) -> str:
    """A keyword hit whose embedding is still pending says so: no vector ranked it, and a
    semantic-only read would not have found it yet."""
    return REASON_KEYWORD_PENDING if memory.embedded_at is None else reason


def keyword_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    vector: Future[list[float]] | None,
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
) -> RecallResult:
    """``keyword`` (no vector) or ``hybrid`` (with the query's vector, possibly still being
    embedded): both legs over one guarded scope. Waiting for the vector can raise
    ``EmbeddingsUnavailable``."""
    started = time.perf_counter()
    fetch = max(limit, settings.MEMORY_RECALL_FUSION_CANDIDATES)
    meta: dict[str, Any] = {}
    strategy = STRATEGY_KEYWORD
    # The keyword leg ranks pending rows too (read-your-writes): a memory is findable by its
    # words as soon as its write commits, before the embedding task reaches it.
    scopes = {
        rows: recall_scope(
            tenant_id=tenant.pk,
            subject_id=subject_id,
            project_id=project_id,
            include_superseded=include_superseded,
            rows=rows,
        )
        for rows in (ROWS_ANY, ROWS_EMBEDDED, ROWS_PENDING)
    }
    population = (scopes[ROWS_EMBEDDED], scopes[ROWS_PENDING])
    if vector is None:
        pending = count_rows(scopes[ROWS_PENDING])
        results = [
            RecallHit(
                memory=memory,
                score=round(score, 6),
                selection_reason=_keyword_reason(memory, REASON_KEYWORD),
            )
            for memory, score in keyword_ranking(
                scopes[ROWS_ANY], query, fetch, population=population
            )[:limit]
        ]
    else:
        # The keyword leg needs no vector: it runs while the query is being embedded. Then
        # the vector leg exactly as `semantic` mode runs it (exact / ann / ann+exact),
        # deeper; both legs rank ids, and only the fused winners' rows are read.
        keyword = keyword_ranked_ids(scopes[ROWS_ANY], query, fetch, population)
        query_vector = vector.result()
        leg = semantic_ranking(
            tenant=tenant,
            subject_id=subject_id,
            vector=query_vector,
            project_id=project_id,
            limit=fetch,
            include_superseded=include_superseded,
        )
        strategy = leg.strategy
        if "ann_iterative_scan" in leg.meta:
            meta["ann_iterative_scan"] = leg.meta["ann_iterative_scan"]
        winners = fuse(leg.ranked, keyword, limit)
        memories, similarities, pending = fetch_rows(
            scopes[ROWS_ANY],
            [winner.pk for winner in winners],
            counting=scopes[ROWS_PENDING],
            vector=VectorParam(query_vector),
        )
        results = [
            RecallHit(
                memory=memories[winner.pk],
                score=winner.score,
                selection_reason=_keyword_reason(memories[winner.pk], _REASONS[winner.legs]),
                similarity=similarities[winner.pk],
            )
            # A winner forgotten between the ranking and this read is left out, not faked.
            for winner in winners
            if winner.pk in memories
        ]
    meta.update(
        envelope_meta(
            results=results,
            limit=limit,
            strategy=strategy,
            pending_searched=pending,
        )
    )
    meta["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return RecallResult(results=results, meta=meta)
