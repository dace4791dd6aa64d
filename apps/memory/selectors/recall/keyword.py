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

import re
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

#: "the user" in a question names the subject every memory is about, however the memory
#: refers to them ("The user works at …", "I work at …"): as a keyword it would only favour the
#: memories phrased in the third person. "the user interface" and the like keep their words.
_THE_SUBJECT = re.compile(
    r"\bthe\s+user(?:['’]s)?\b(?!\s+(?:interface|experience|base|research|manual|guide|"
    r"stor(?:y|ies)|accounts?|ids?|agent|flow|journey|data|settings|names?|roles?)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Keywords:
    """A keyword query and whose postings it reads: the owner the scope was built for.
    ``narrowed``: the scope is cut down by a filter, a time window or ``as_of``, so perhaps
    few of the rows holding a query word are in it (the statement then reads the scope's ids
    once instead of checking rows one by one, best first, until enough pass)."""

    query: str
    tenant_id: Any
    subject_id: str
    narrowed: bool = False

    @classmethod
    def of_recall(
        cls,
        *,
        query: str,
        tenant: Tenant,
        subject_id: str,
        narrowing: RecordFilter | None,
        as_of: datetime | None,
    ) -> Keywords:
        """A recall's keywords: the question's words but "the user" (see :data:`_THE_SUBJECT`);
        its scope is narrowed when it filters or reads ``as_of``."""
        return cls(
            query=_THE_SUBJECT.sub(" ", query),
            tenant_id=tenant.pk,
            subject_id=subject_id,
            narrowed=narrowing is not None or as_of is not None,
        )


def _bm25_sql(
    scope: CompiledScope, keywords: Keywords, fetch: int, *, rows: bool = True
) -> tuple[str, list[Any]]:
    """Okapi BM25 for the rows in ``scope``, best first (one statement), read from the
    subject's postings (``memory_search_term``, migration 0020) instead of the documents.

    The query's lexemes (parsed with ``search_vector``'s own config: stemmed, stop words
    dropped) are OR'd, so a natural-language question matches any of its words. Each lexeme's
    postings in the subject are one index-only range scan; they carry the lexeme's
    occurrences in the text (each counts 1) and in the contexts (each counts
    ``MEMORY_RECALL_CONTEXT_TERM_WEIGHT``) and the document's length in distinct lexemes.
    Every row holding a query word is scored from them alone; the rows are then taken best
    first and each is checked against ``scope`` by its primary key until ``fetch`` pass, so a
    recall probes about as many rows as it keeps, whatever the subject's size. A narrowed
    scope (``Keywords.narrowed``) may let few of them pass, and probing every one would cost
    more than reading the scope's ids once: there the ids are read first and joined in.

    The collection BM25 weighs words against is the subject's whole store, not the scope:
    IDF counts the subject's rows holding the lexeme (live or superseded, any project,
    embedded or not) against its row count (``memory_scope_usage``, kept by triggers: one
    row, whatever the subject's size), and lengths are normalised by the mean of those rows
    that hold a query word (cheaper than every row's, and measured no worse). A filter, a
    time window, ``as_of`` or a project partition decides which rows rank and never how a row
    scores, as in a search engine's filtered query; counting the scope's own rows cost a scan
    of every one of them on every recall. Scores are rounded to 12 decimals before ordering:
    rows with the same terms tie exactly, and go by id, instead of by the last bit of a sum
    whose order the hash aggregate picks.

    The work is one posting per (matching row, query word), never a document: on a subject
    whose name is in every memory that is still every row, but each costs an index entry, not
    a decompressed tsvector tested once per word (docs/memory.md, "Keyword latency").

    The statement needs no query vector, so ``hybrid`` runs it while the query is embedded.
    Without ``rows`` it returns each row's id instead of its columns.
    """
    table, pk = scope.table, quote(scope.using, "id")
    columns = select_list(scope.using) if rows else f"{table}.{pk}"
    # On a narrowed scope the scope's ids are read once and joined in before scoring; on
    # the whole scope the scored rows go best first into the primary-key probes at the end.
    scoped, in_scope = "", ""
    if keywords.narrowed:
        scoped = f"""
        ), scoped AS MATERIALIZED (
            SELECT {table}.{pk} AS id FROM {table} WHERE {scope.where}"""  # noqa: S608
        in_scope = "JOIN scoped USING (id)"
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    sql = f"""
        WITH terms AS (
            SELECT array_agg(DISTINCT lexeme) AS lexemes
              FROM unnest(to_tsvector(%s::regconfig, %s))
        ), postings AS MATERIALIZED (
            SELECT term.memory_id AS id, term.lexeme, term.length::float8 AS length,
                   (term.in_text + %s * term.in_context)::float8 AS frequency
              FROM memory_search_term AS term
             WHERE term.tenant_id = %s AND term.subject_id = %s
               AND term.lexeme = ANY ((SELECT lexemes FROM terms)::text[])
        ), population AS (
            SELECT coalesce(usage.live + usage.superseded, 0)::float8 AS rows
              FROM (SELECT) AS one
              LEFT JOIN memory_scope_usage AS usage
                ON usage.tenant_id = %s AND usage.subject_id = %s
        ), weights AS MATERIALIZED (
            -- The counter and the postings are kept in the same transactions and read in one
            -- snapshot, so a word's rows never outnumber the subject's; the floor guards IDF's
            -- sign should they ever disagree.
            SELECT lexeme,
                   ln(1 + (greatest(population.rows, count(*)) - count(*) + 0.5)
                          / (count(*) + 0.5)) AS idf
              FROM postings CROSS JOIN population
             GROUP BY lexeme, population.rows
        ), shape AS MATERIALIZED (
            SELECT greatest(avg(length), 1) AS mean_length
              FROM (SELECT DISTINCT id, length FROM postings) AS matching{scoped}
        ), scored AS (
            SELECT postings.id,
                   round(sum(weights.idf * postings.frequency * (%s + 1)
                             / (postings.frequency
                                + %s * (1 - %s + %s * postings.length / shape.mean_length))
                   )::numeric, 12)::float8 AS keyword_score
              FROM postings JOIN weights USING (lexeme) CROSS JOIN shape {in_scope}
             GROUP BY postings.id ORDER BY keyword_score DESC, postings.id
        )
        SELECT {columns}, scored.keyword_score
          FROM scored JOIN {table} ON {table}.{pk} = scored.id
         WHERE {scope.where}
         ORDER BY scored.keyword_score DESC, scored.id
         LIMIT %s
    """  # noqa: S608
    k1, b = settings.MEMORY_RECALL_BM25_K1, settings.MEMORY_RECALL_BM25_B
    params: list[Any] = [
        MEMORY_TEXT_SEARCH_CONFIG,  # terms
        keywords.query,
        settings.MEMORY_RECALL_CONTEXT_TERM_WEIGHT,  # postings
        keywords.tenant_id,
        keywords.subject_id,
        keywords.tenant_id,  # population
        keywords.subject_id,
        *(scope.params if keywords.narrowed else ()),  # scoped
        *(k1, k1, b, b),  # scored
        *scope.params,  # the rows
        fetch,
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
    keywords = Keywords.of_recall(
        query=query, tenant=tenant, subject_id=subject_id, narrowing=narrowing, as_of=as_of
    )
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
