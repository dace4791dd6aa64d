"""The keyword leg: Okapi BM25 in SQL, alone (``keyword`` mode) or as one leg of ``hybrid``
(the default mode, ``hybrid.py``).

BM25 over the stored tsvector (``search_vector``: text weight A, the memory's retrieval
``context`` weight B, the context the service derived weight C; a row has at most one of the
two contexts, and both count as context), computed in SQL over the recall's compiled scope:
the question's lexemes OR'd, IDF from the subject's own rows, so a name that appears in every
other memory weighs little and a rare word a lot. It covers the subject's every row, embedded
or not, so a memory is findable by its words as soon as its write commits.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.core.db.filters import RecordFilter
from apps.memory.models import MEMORY_TEXT_SEARCH_CONFIG, Memory
from apps.memory.selectors.recall.results import (
    REASON_KEYWORD,
    REASON_KEYWORD_PENDING,
    STRATEGY_KEYWORD,
    RecallHit,
    RecallResult,
    envelope_meta,
)
from apps.memory.selectors.recall.scope import (
    ROWS_ANY,
    ROWS_PENDING,
    CompiledScope,
    count_rows,
    fetch_scored,
    fetch_values,
    quote,
    recall_scope,
    select_list,
)
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class Keywords:
    """A keyword query and whose postings it reads: the owner the scope was built for."""

    query: str
    tenant_id: Any
    subject_id: str


def _bm25_sql(
    scope: CompiledScope, keywords: Keywords, fetch: int, *, rows: bool = True
) -> tuple[str, list[Any]]:
    """Okapi BM25 for the rows in ``scope``, best first (one statement), read from the
    subject's postings (``memory_search_term``, migration 0020) instead of the documents.

    The query's lexemes (parsed with ``search_vector``'s own config: stemmed, stop words
    dropped) are OR'd, so a natural-language question matches any of its words. Each lexeme's
    postings in the subject are one index range scan, narrowed to the rows in ``scope``; they
    carry the lexeme's occurrences in the text (each counts 1) and in the contexts (each counts
    ``MEMORY_RECALL_CONTEXT_TERM_WEIGHT``) and the document's length in distinct lexemes. IDF
    counts the scope's rows holding the lexeme against the scope's size; lengths are
    normalised by the matching rows' mean (cheaper than the whole scope's, and measured no
    worse). Scores are rounded to 12 decimals before ordering: rows with the same terms tie
    exactly, and go by id, instead of by the last bit of a sum whose order the hash aggregate
    picks.

    The work is one posting per (matching row, query word), never a document: on a subject
    whose name is in every memory that is still every row, but each costs an index entry, not
    a decompressed tsvector tested once per word (docs/memory.md, "Keyword latency").

    The scope's size (IDF's population) is counted from the scope's ids, which the statement
    materialises anyway to narrow the postings: no second scan of the subject's rows.

    The statement needs no query vector, so ``hybrid`` runs it while the query is embedded.
    Without ``rows`` it returns each row's id instead of its columns.
    """
    table, pk = scope.table, quote(scope.using, "id")
    columns = select_list(scope.using) if rows else f"{table}.{pk}"
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    sql = f"""
        WITH terms AS (
            SELECT array_agg(DISTINCT lexeme) AS lexemes
              FROM unnest(to_tsvector(%s::regconfig, %s))
        ), scoped AS MATERIALIZED (
            SELECT {table}.{pk} AS id FROM {table} WHERE {scope.where}
        ), postings AS MATERIALIZED (
            SELECT term.memory_id AS id, term.lexeme, term.length::float8 AS length,
                   (term.in_text + %s * term.in_context)::float8 AS frequency
              FROM memory_search_term AS term JOIN scoped ON scoped.id = term.memory_id
             WHERE term.tenant_id = %s AND term.subject_id = %s
               AND term.lexeme = ANY ((SELECT lexemes FROM terms)::text[])
        ), weights AS MATERIALIZED (
            SELECT lexeme,
                   ln(1 + (population.rows - count(*) + 0.5) / (count(*) + 0.5)) AS idf
              FROM postings
             CROSS JOIN (SELECT count(*)::float8 AS rows FROM scoped) AS population
             GROUP BY lexeme, population.rows
        ), shape AS MATERIALIZED (
            SELECT greatest(avg(length), 1) AS mean_length
              FROM (SELECT DISTINCT id, length FROM postings) AS matched
        ), ranked AS (
            SELECT postings.id,
                   round(sum(weights.idf * postings.frequency * (%s + 1)
                             / (postings.frequency
                                + %s * (1 - %s + %s * postings.length / shape.mean_length))
                   )::numeric, 12)::float8 AS keyword_score
              FROM postings JOIN weights USING (lexeme) CROSS JOIN shape
             GROUP BY postings.id ORDER BY keyword_score DESC, postings.id LIMIT %s
        )
        SELECT {columns}, ranked.keyword_score FROM {table}
          JOIN ranked ON ranked.id = {table}.{pk}
         WHERE {scope.where} ORDER BY ranked.keyword_score DESC, {table}.{pk}
    """  # noqa: S608
    k1, b = settings.MEMORY_RECALL_BM25_K1, settings.MEMORY_RECALL_BM25_B
    params: list[Any] = [
        MEMORY_TEXT_SEARCH_CONFIG,  # terms
        keywords.query,
        *scope.params,  # scoped
        settings.MEMORY_RECALL_CONTEXT_TERM_WEIGHT,  # postings
        keywords.tenant_id,
        keywords.subject_id,
        *(k1, k1, b, b, fetch),  # ranked
        *scope.params,  # the rows
    ]
    return sql, params


def keyword_ranking(
    scope: CompiledScope, keywords: Keywords, fetch: int
) -> list[tuple[Memory, float]]:
    """The scope's top-``fetch`` rows by BM25 for ``keywords`` (rows matching no word: none),
    as ``(memory, bm25)``. ``scope`` must cover rows of ``keywords``' owner only."""
    sql, params = _bm25_sql(scope, keywords, fetch)
    return [(memory, float(score)) for memory, (score,) in fetch_scored(scope, sql, params)]


def keyword_ranked_ids(
    scope: CompiledScope, keywords: Keywords, fetch: int
) -> list[tuple[uuid.UUID, float]]:
    """:func:`keyword_ranking` as ``(id, bm25)``, without reading the rows: the keyword leg
    of ``hybrid``, whose rows only matter for the fused winners."""
    sql, params = _bm25_sql(scope, keywords, fetch, rows=False)
    return [(pk, float(score)) for pk, score in fetch_values(scope, sql, params)]


def keyword_reason(memory: Memory, reason: str) -> str:
    """A keyword hit whose embedding is still pending says so: no vector ranked it, and a
    semantic-only read would not have found it yet."""
    return REASON_KEYWORD_PENDING if memory.embedded_at is None else reason


@dataclass(frozen=True)
class KeywordScopes:
    """The scopes both keyword-ranked modes read: every row in scope (the keyword leg ranks
    pending rows too, so a memory is findable by its words as soon as its write commits), and
    its pending part, counted for ``pending_searched``."""

    any: CompiledScope
    pending: CompiledScope


def keyword_scopes(
    *,
    tenant: Tenant,
    subject_id: str,
    project_id: uuid.UUID | None,
    include_superseded: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> KeywordScopes:
    any_row, pending = (
        recall_scope(
            tenant_id=tenant.pk,
            subject_id=subject_id,
            project_id=project_id,
            include_superseded=include_superseded,
            rows=rows,
            as_of=as_of,
            narrowing=narrowing,
        )
        for rows in (ROWS_ANY, ROWS_PENDING)
    )
    return KeywordScopes(any=any_row, pending=pending)


def keyword_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> RecallResult:
    """``keyword`` mode: the subject's top-``limit`` rows by BM25, embedded or not."""
    started = time.perf_counter()
    scopes = keyword_scopes(
        tenant=tenant,
        subject_id=subject_id,
        project_id=project_id,
        include_superseded=include_superseded,
        as_of=as_of,
        narrowing=narrowing,
    )
    keywords = Keywords(query=query, tenant_id=tenant.pk, subject_id=subject_id)
    pending = count_rows(scopes.pending)
    results = [
        RecallHit(
            memory=memory,
            score=round(score, 6),
            selection_reason=keyword_reason(memory, REASON_KEYWORD),
        )
        for memory, score in keyword_ranking(scopes.any, keywords, limit)
    ]
    meta: dict[str, Any] = envelope_meta(
        results=results, limit=limit, strategy=STRATEGY_KEYWORD, pending_searched=pending
    )
    meta["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return RecallResult(results=results, meta=meta)
