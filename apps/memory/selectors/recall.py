"""Recall: the subject's own memories ranked by meaning, index-safe and never underfilled.

Strategy per query (docs/memory.md has the measurements):

* ``exact`` — the subject has at most ``MEMORY_EXACT_SCAN_MAX_ROWS`` live embedded rows: every
  one of them is scored (an index-only scan of the covering (tenant, subject) index, migration
  0006) and the top-k taken. Recall is 1.0 by construction. The ORDER BY is ``distance + 0``,
  an expression the HNSW index cannot serve, so no planner change can silently turn this read
  into an approximate one. The size check rides in the same statement (a one-time NOT EXISTS
  over the narrow live-scope index, migration 0005), so the common case is one round trip.
* ``ann`` — a larger subject: pgvector's iterative HNSW scan (``relaxed_order``) with the
  scope as residual filters, over-fetched (``MEMORY_HNSW_CANDIDATES_PER_RESULT`` candidates
  per result) and re-ranked exactly; ``enable_sort`` is off for that statement, so
  the HNSW scan is the only plan without a Sort and a large subject cannot be sent to the
  btree instead. If the index still hands back fewer than k rows while the subject has more,
  the read is completed by the exact scan (``ann+exact``), so ``underfilled`` means the
  subject really has fewer rows.

Every statement is assembled around the WHERE clause Django compiles from the queryset that
:func:`apps.core.repos.heavy_read_memories` (the structural (tenant, subject) guard) checked,
and runs on the heavy-read alias; rows come back as ``Memory`` instances (``Memory.from_db``).

Modes (docs/memory.md, "Recall modes"; LoCoMo figures in docs/benchmarks.md):

* ``semantic`` — the vector ranking above;
* ``keyword`` — Okapi BM25 over the stored tsvector (``search_vector``: text weight A, the
  memory's retrieval ``context`` weight B), computed in SQL over the same compiled scope:
  the question's lexemes OR'd, IDF from the subject's own rows, so a name that appears in
  every other memory weighs little and a rare word a lot;
* ``hybrid`` — both legs, fused by weighted reciprocal rank (``MEMORY_RECALL_RRF_K``,
  ``MEMORY_RECALL_*_WEIGHT``).

Each hit carries a ``selection_reason`` (``semantic`` | ``keyword`` | ``keyword+semantic`` |
``keyword_fallback`` | ``ilike_fallback``).

Embeddings unavailable or the heavy-read pool shed → the keyword ranking over the subject's
live rows on the OLTP repo, topped up by a recent-first substring match (``fallback: true``,
``score: null``).
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import OperationalError, connections, transaction
from django.db.models import Case, IntegerField, Q, Value, When
from django.db.models.expressions import Col
from django.db.models.functions import Coalesce

from apps.core.db.routers import PRIMARY
from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.core.repos import ScopeViolation, heavy_read_memories, require_scope
from apps.core.vectors import vector_literal
from apps.memory.exceptions import MemoryErrorCode
from apps.memory.models import MEMORY_TEXT_SEARCH_CONFIG, Memory
from apps.memory.recall_bump import schedule_recall_bump
from apps.memory.selectors.listing import LIST_DEFERRED_FIELDS
from apps.memory.selectors.scoping import project_partition
from apps.providers.embeddings import EmbeddingsUnavailable, embed_query
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

#: Fallback reason when the heavy-read repo fails (statement timeout, replica down).
HEAVY_READ_UNAVAILABLE = "heavy_read_unavailable"
STRATEGY_EXACT = "exact"
STRATEGY_ANN = "ann"
STRATEGY_ANN_EXACT = "ann+exact"
STRATEGY_FALLBACK = "fallback"
STRATEGY_KEYWORD = "keyword"
MODE_SEMANTIC = "semantic"
MODE_KEYWORD = "keyword"
MODE_HYBRID = "hybrid"
RECALL_MODES = (MODE_SEMANTIC, MODE_KEYWORD, MODE_HYBRID)
REASON_SEMANTIC = "semantic"
REASON_KEYWORD = "keyword"
REASON_KEYWORD_AND_SEMANTIC = "keyword+semantic"
REASON_KEYWORD_FALLBACK = "keyword_fallback"
REASON_ILIKE_FALLBACK = "ilike_fallback"
RECALL_SELECTION_REASONS = (
    REASON_SEMANTIC,
    REASON_KEYWORD,
    REASON_KEYWORD_AND_SEMANTIC,
    REASON_KEYWORD_FALLBACK,
    REASON_ILIKE_FALLBACK,
)
FALLBACK_MAX_TERMS = 8
FALLBACK_MIN_TERM_LENGTH = 3
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float | None
    #: Which ranking put the memory here (the REASON_* values).
    selection_reason: str = REASON_SEMANTIC
    #: Cosine similarity to the query when the vector leg ranked it (the recall bump's test).
    similarity: float | None = None


@dataclass
class RecallResult:
    results: list[RecallHit]
    meta: dict[str, Any] = field(default_factory=dict)


def validate_recall_query(query: object) -> str:
    """The shared query contract: a non-blank string of at most 500 characters."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationFailed(
            "query must be a non-blank string.", code=MemoryErrorCode.INVALID_QUERY
        )
    if len(query) > settings.MEMORY_QUERY_MAX_CHARS:
        raise ValidationFailed(
            f"query is longer than {settings.MEMORY_QUERY_MAX_CHARS} characters.",
            code=MemoryErrorCode.QUERY_TOO_LONG,
        )
    return query


def validate_recall_mode(mode: object) -> str:
    if mode is None:
        return str(settings.MEMORY_RECALL_DEFAULT_MODE)
    if mode not in RECALL_MODES:
        raise ValidationFailed(
            f"mode must be one of {', '.join(RECALL_MODES)}.", details={"mode": str(mode)}
        )
    return str(mode)


def memory_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None = None,
    limit: int = 10,
    include_superseded: bool = False,
    query_embedding: list[float] | None = None,
    mode: str | None = None,
) -> RecallResult:
    """The subject's top-``limit`` memories for ``query`` (spec envelope ``{results, meta}``).

    ``mode`` is ``semantic`` | ``keyword`` | ``hybrid`` (default ``MEMORY_RECALL_DEFAULT_MODE``).
    ``query_embedding`` lets a caller that already embedded the query (merged recall) reuse it.
    """
    query = validate_recall_query(query)
    mode = validate_recall_mode(mode)
    limit = max(1, min(int(limit), settings.MEMORY_RECALL_MAX_LIMIT))
    if mode == MODE_KEYWORD:
        query_embedding = None
    elif query_embedding is None:
        try:
            query_embedding = embed_query(tenant_embedding_config(tenant=tenant), query)
        except EmbeddingsUnavailable as exc:
            return _fallback(
                tenant=tenant,
                subject_id=subject_id,
                query=query,
                project_id=project_id,
                limit=limit,
                reason=exc.reason,
                mode=mode,
            )
    try:
        with heavy_read_slot(tenant_id=tenant.pk):
            if mode == MODE_SEMANTIC:
                assert query_embedding is not None  # noqa: S101 - narrowed above
                result = _semantic(
                    tenant=tenant,
                    subject_id=subject_id,
                    vector=query_embedding,
                    project_id=project_id,
                    limit=limit,
                    include_superseded=include_superseded,
                )
            else:
                result = _ranked_by_keyword(
                    tenant=tenant,
                    subject_id=subject_id,
                    query=query,
                    vector=query_embedding,
                    project_id=project_id,
                    limit=limit,
                    include_superseded=include_superseded,
                )
    except (HeavyReadShed, OperationalError) as exc:
        # Shed, or the heavy-read repo timed out or is unreachable: answer from the OLTP repo.
        return _fallback(
            tenant=tenant,
            subject_id=subject_id,
            query=query,
            project_id=project_id,
            limit=limit,
            reason=exc.reason if isinstance(exc, HeavyReadShed) else HEAVY_READ_UNAVAILABLE,
            mode=mode,
        )
    result.meta["mode"] = mode
    schedule_recall_bump(
        memory_ids=[
            hit.memory.pk
            for hit in result.results
            if hit.similarity is not None
            and hit.similarity >= settings.MEMORY_RECALL_BUMP_MIN_SCORE
        ]
    )
    return result


def _scoped(
    *, tenant: Tenant, subject_id: str, project_id: uuid.UUID | None, include_superseded: bool
) -> Any:
    live = Q() if include_superseded else Q(superseded_by_id__isnull=True)
    # One filter() call, FK columns by attname: this runs on every recall, and each extra
    # call (or relation lookup Django must join and then trim) is measurable there.
    queryset = Memory.objects.filter(
        project_partition(project_id=project_id),
        live,
        tenant_id=tenant.pk,
        subject_id=subject_id,
        embedding__isnull=False,
    )
    return heavy_read_memories(queryset, tenant_id=tenant.pk, subject_id=subject_id)


@dataclass(frozen=True)
class _CompiledScope:
    """The guarded queryset's WHERE clause, compiled by Django once per recall.

    Every statement of one recall (the exact scan, its threshold check, the ANN scan, the
    completion) is built around this one clause, so each runs exactly the predicate that
    :func:`heavy_read_memories` inspected. Assembling the rest of the statement by hand
    instead of through the queryset compiler is the hot path's largest saving: Django's
    compile of the annotated, ordered query cost more than the scan itself (docs/memory.md).
    """

    where: str
    params: tuple[Any, ...]
    using: str
    table: str


def _compile_scope(queryset: Any) -> _CompiledScope | None:
    """``None`` when the scope can match nothing (Django proves it while compiling)."""
    query = queryset.query
    # Aliases with no references are joins Django trimmed (FK IS NULL reads the column).
    if sum(1 for count in query.alias_refcount.values() if count) != 1:
        # A join would name a table the hand-built FROM lacks: refuse loudly, never widen.
        raise ScopeViolation("recall's scope must filter memory rows only, without joins")
    connection = connections[queryset.db]
    compiler = query.get_compiler(using=queryset.db)
    try:
        where, params = compiler.compile(query.where)
    except EmptyResultSet:
        return None
    return _CompiledScope(
        where=where,
        params=tuple(params),
        using=queryset.db,
        table=connection.ops.quote_name(Memory._meta.db_table),
    )


@dataclass(frozen=True)
class _RowShape:
    """What recall selects of a memory row and how Django turns it back into a ``Memory``."""

    select_list: str
    field_names: list[str]
    # (position, expression, converters) for the columns that need one (e.g. JSON).
    converters: list[tuple[int, Col, list[Any]]]


@functools.cache
def _row_shape(using: str) -> _RowShape:
    """Every column but the vector (nothing downstream reads it; parsing it costs), once per
    process: resolving columns and converters per query is what ``raw()`` would repeat."""
    connection = connections[using]
    quote = connection.ops.quote_name
    table = Memory._meta.db_table
    fields = [
        field for field in Memory._meta.concrete_fields if field.name not in LIST_DEFERRED_FIELDS
    ]
    columns = [str(field.column) for field in fields]
    converters: list[tuple[int, Col, list[Any]]] = []
    for position, model_field in enumerate(fields):
        column = Col(table, model_field)
        found = connection.ops.get_db_converters(column) + model_field.get_db_converters(connection)
        if found:
            converters.append((position, column, found))
    return _RowShape(
        select_list=", ".join(f"{quote(table)}.{quote(column)}" for column in columns),
        field_names=[field.attname for field in fields],
        converters=converters,
    )


def _select_list(using: str) -> str:
    return _row_shape(using).select_list


def _quote(using: str, name: str) -> str:
    return str(connections[using].ops.quote_name(name))


def _exact(
    scope: _CompiledScope, literal: str, limit: int, *, threshold: int | None = None
) -> list[tuple[Memory, float]]:
    """The scope's true top-``limit`` rows, nearest first: every row in scope is scored.

    One statement in two steps. The inner one ranks ``(id, distance)`` only, so Postgres
    answers it with an index-only scan of the covering index (migration 0006): one subject's
    vectors sit together in its leaf pages instead of on one heap page per row. The outer one
    fetches the winners' rows, under the same scope predicate.

    The ORDER BY is ``distance + 0``, an expression the HNSW index cannot serve, so no planner
    change can turn this read into an approximate one.

    ``threshold``: rank nothing unless the scope holds at most that many rows — an
    uncorrelated NOT EXISTS that Postgres evaluates once (an InitPlan), reading at most
    threshold + 1 entries of the narrow live-scope index (migration 0005) and no heap.
    """
    table, pk = scope.table, _quote(scope.using, "id")
    embedding = _quote(scope.using, "embedding")
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    inner = [
        f"SELECT {table}.{pk}, ({table}.{embedding} <=> %s) + 0 AS distance "  # noqa: S608
        f"FROM {table} WHERE {scope.where}"
    ]
    params: list[Any] = [literal, *scope.params]
    if threshold is not None:
        inner.append(
            f" AND NOT EXISTS (SELECT 1 FROM {table} WHERE {scope.where} OFFSET %s LIMIT 1)"  # noqa: S608
        )
        params += [*scope.params, threshold]
    inner.append(f" ORDER BY distance, {table}.{pk} LIMIT %s")
    params += [limit, *scope.params]
    sql = (
        f"SELECT {_select_list(scope.using)}, ranked.distance FROM {table} "  # noqa: S608
        f"JOIN ({''.join(inner)}) AS ranked ON ranked.{pk} = {table}.{pk} "
        f"WHERE {scope.where} ORDER BY ranked.distance, {table}.{pk}"
    )
    return _fetch(scope, sql, params)


def _approximate(scope: _CompiledScope, literal: str, fetch: int) -> list[tuple[Memory, float]]:
    """The first ``fetch`` rows in scope the HNSW index hands back, by the bare operator."""
    table = scope.table
    embedding = _quote(scope.using, "embedding")
    sql = (
        f"SELECT {_select_list(scope.using)}, ({table}.{embedding} <=> %s) AS distance "  # noqa: S608
        f"FROM {table} WHERE {scope.where} ORDER BY distance LIMIT %s"
    )
    return _fetch(scope, sql, [literal, *scope.params, fetch])


def _fetch(scope: _CompiledScope, sql: str, params: list[Any]) -> list[tuple[Memory, float]]:
    """Run a statement selecting ``_select_list`` plus one score column; rows as
    ``(Memory, score)``, built the way Django's own iterators build them (``from_db`` after
    the fields' converters), without ``raw()``'s per-query column resolution."""
    shape = _row_shape(scope.using)
    connection = connections[scope.using]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    ranked = []
    for row in rows:
        values = list(row[:-1])
        for position, column, converters in shape.converters:
            for converter in converters:
                values[position] = converter(values[position], column, connection)
        ranked.append((Memory.from_db(scope.using, shape.field_names, values), float(row[-1])))
    return ranked


def _has_rows(scope: _CompiledScope) -> bool:
    with connections[scope.using].cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {scope.table} WHERE {scope.where} LIMIT 1",  # noqa: S608
            scope.params,
        )
        return cursor.fetchone() is not None


def _ann(scope: _CompiledScope, literal: str, limit: int) -> list[tuple[Memory, float]]:
    with transaction.atomic(using=scope.using), connections[scope.using].cursor() as cursor:
        # One round trip for every knob, each local to this transaction:
        # - relaxed_order: the iterative scan keeps walking the graph until `limit` rows pass
        #   the scope filter (or max_scan_tuples), instead of filtering one ef_search pool;
        # - enable_sort off: the only plan left without a Sort is the HNSW index scan, so the
        #   planner cannot pick the (tenant, subject) btree + sort for a large subject and turn
        #   the ANN read into a slow exact one (PG counts disabled nodes; cost is moot).
        cursor.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.max_scan_tuples', %s, true), "
            "set_config('enable_sort', 'off', true)",
            [
                str(max(settings.MEMORY_HNSW_EF_SEARCH, limit)),
                str(settings.MEMORY_HNSW_MAX_SCAN_TUPLES),
            ],
        )
        ranked = _approximate(
            scope, literal, limit * max(1, settings.MEMORY_HNSW_CANDIDATES_PER_RESULT)
        )
    # relaxed_order returns neighbours roughly in order; the final order (and cut) is exact.
    ranked.sort(key=lambda pair: (pair[1], str(pair[0].pk)))
    return ranked[:limit]


def _semantic(
    *,
    tenant: Tenant,
    subject_id: str,
    vector: Sequence[float],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
) -> RecallResult:
    started = time.perf_counter()
    scope = _compile_scope(
        _scoped(
            tenant=tenant,
            subject_id=subject_id,
            project_id=project_id,
            include_superseded=include_superseded,
        )
    )
    # Built once per recall and shared by every statement (this sits on the hot path).
    literal = vector_literal(vector)
    meta: dict[str, Any] = {}
    ranked: list[tuple[Memory, float]] = []
    strategy = STRATEGY_EXACT
    if include_superseded:
        if scope is not None:
            ranked = _exact(scope, literal, limit)
    else:
        meta["ann_iterative_scan"] = "off"
        if scope is not None:
            # The common case is one statement: the exact top-k behind a one-time check that
            # the subject has at most `threshold` rows. A larger subject returns no rows, and
            # so does an empty one; a LIMIT 1 probe tells the two apart.
            threshold = settings.MEMORY_EXACT_SCAN_MAX_ROWS
            ranked = _exact(scope, literal, limit, threshold=threshold)
            if not ranked and _has_rows(scope):
                strategy = STRATEGY_ANN
                meta["ann_iterative_scan"] = "applied"
                ranked = _ann(scope, literal, limit)
                if len(ranked) < limit:
                    # The index gave up before k rows (max_scan_tuples); finish exactly.
                    strategy = STRATEGY_ANN_EXACT
                    ranked = _exact(scope, literal, limit)
    results = [
        RecallHit(memory=memory, score=1.0 - distance, similarity=1.0 - distance)
        for memory, distance in ranked
    ]
    meta.update(
        {
            "total_count": len(results),
            "fallback": False,
            "reason": None,
            "underfilled": len(results) < limit,
            "strategy": strategy,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
        }
    )
    return RecallResult(results=results, meta=meta)


def _bm25_sql(scope: _CompiledScope, fetch: int) -> tuple[str, list[Any]]:
    """Okapi BM25 over ``search_vector`` for the rows in ``scope``, best first (one statement).

    The query's lexemes (parsed with the column's own config: stemmed, stop words dropped)
    are OR'd, so a natural-language question matches any of its words. Only rows matching
    some lexeme are read (the GIN index, or the scope's btree and a filter); IDF counts the
    matching rows per lexeme against the scope's size. A lexeme's frequency counts each
    occurrence in the text as 1 and in the context as ``MEMORY_RECALL_CONTEXT_TERM_WEIGHT``;
    the document length is its number of distinct lexemes, normalised by the matching rows'
    mean (cheaper than the whole scope's, and measured no worse).
    """
    table, pk = scope.table, _quote(scope.using, "id")
    vector = f"{table}.{_quote(scope.using, 'search_vector')}"
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    sql = f"""
        WITH terms AS (
            SELECT DISTINCT lexeme FROM unnest(to_tsvector(%s::regconfig, %s))
        ), matched AS (
            SELECT {table}.{pk} AS id, {vector} AS document FROM {table}
             WHERE {scope.where} AND {vector} @@ (
                   SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM terms)
        ), population AS (
            SELECT count(*)::float8 AS rows FROM {table} WHERE {scope.where}
        ), hits AS (
            SELECT matched.id, term.lexeme, length(matched.document)::float8 AS length,
                   (SELECT sum(CASE weight WHEN 'A' THEN 1.0 ELSE %s END)
                      FROM unnest(term.weights) AS weight)::float8 AS frequency
              FROM matched CROSS JOIN LATERAL unnest(matched.document) AS term
             WHERE term.lexeme IN (SELECT lexeme FROM terms)
        ), frequency AS (
            SELECT lexeme, count(*)::float8 AS rows FROM hits GROUP BY lexeme
        ), shape AS (
            SELECT avg(length(document))::float8 AS mean_length FROM matched
        ), ranked AS (
            SELECT hits.id, sum(
                       ln(1 + (population.rows - frequency.rows + 0.5) / (frequency.rows + 0.5))
                       * hits.frequency * (%s + 1)
                       / (hits.frequency
                          + %s * (1 - %s + %s * hits.length / greatest(shape.mean_length, 1))))
                   AS keyword_score
              FROM hits JOIN frequency USING (lexeme) CROSS JOIN population CROSS JOIN shape
             GROUP BY hits.id ORDER BY keyword_score DESC, hits.id LIMIT %s
        )
        SELECT {_select_list(scope.using)}, ranked.keyword_score FROM {table}
          JOIN ranked ON ranked.id = {table}.{pk}
         WHERE {scope.where} ORDER BY ranked.keyword_score DESC, {table}.{pk}
    """  # noqa: S608
    k1, b = settings.MEMORY_RECALL_BM25_K1, settings.MEMORY_RECALL_BM25_B
    params: list[Any] = [
        *scope.params,
        *scope.params,
        settings.MEMORY_RECALL_CONTEXT_TERM_WEIGHT,
        k1,
        k1,
        b,
        b,
        fetch,
        *scope.params,
    ]
    return sql, params


def _keyword(scope: _CompiledScope, query: str, fetch: int) -> list[tuple[Memory, float]]:
    """The scope's top-``fetch`` rows by BM25 for ``query`` (rows matching no word: none)."""
    sql, params = _bm25_sql(scope, fetch)
    rows = Memory.objects.db_manager(scope.using).raw(
        sql, [MEMORY_TEXT_SEARCH_CONFIG, query, *params]
    )
    # `keyword_score` is the extra column RawQuerySet sets on each instance.
    return [(memory, float(getattr(memory, "keyword_score"))) for memory in rows]  # noqa: B009


def _fuse(
    semantic: Sequence[RecallHit], keyword: Sequence[tuple[Memory, float]], limit: int
) -> list[RecallHit]:
    """Weighted reciprocal rank fusion; the score is normalised so 1.0 means "first in both".

    Ties (equal fused score) go to the better semantic rank, then the better keyword rank,
    then the id, so the order is total and repeatable.
    """
    k = settings.MEMORY_RECALL_RRF_K
    weights = {
        "semantic": settings.MEMORY_RECALL_SEMANTIC_WEIGHT,
        "keyword": settings.MEMORY_RECALL_KEYWORD_WEIGHT,
    }
    memories: dict[Any, Memory] = {}
    similarity: dict[Any, float | None] = {}
    ranks: dict[Any, dict[str, int]] = {}
    for rank, hit in enumerate(semantic, start=1):
        memories[hit.memory.pk] = hit.memory
        similarity[hit.memory.pk] = hit.similarity
        ranks.setdefault(hit.memory.pk, {})["semantic"] = rank
    for rank, (memory, _score) in enumerate(keyword, start=1):
        memories.setdefault(memory.pk, memory)
        ranks.setdefault(memory.pk, {})["keyword"] = rank
    ceiling = sum(weights.values()) / (k + 1)

    def fused(pk: Any) -> float:
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
    reasons = {
        frozenset({"semantic"}): REASON_SEMANTIC,
        frozenset({"keyword"}): REASON_KEYWORD,
        frozenset({"semantic", "keyword"}): REASON_KEYWORD_AND_SEMANTIC,
    }
    return [
        RecallHit(
            memory=memories[pk],
            score=round(fused(pk), 6),
            selection_reason=reasons[frozenset(ranks[pk])],
            similarity=similarity.get(pk),
        )
        for pk in order[:limit]
    ]


def _ranked_by_keyword(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    vector: Sequence[float] | None,
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
) -> RecallResult:
    """``keyword`` (no vector) or ``hybrid`` (with one): both legs over one guarded scope."""
    started = time.perf_counter()
    fetch = max(limit, settings.MEMORY_RECALL_FUSION_CANDIDATES)
    meta: dict[str, Any] = {}
    semantic: list[RecallHit] = []
    strategy = STRATEGY_KEYWORD
    if vector is not None:
        # The vector leg exactly as `semantic` mode runs it (exact / ann / ann+exact), deeper.
        leg = _semantic(
            tenant=tenant,
            subject_id=subject_id,
            vector=vector,
            project_id=project_id,
            limit=fetch,
            include_superseded=include_superseded,
        )
        semantic, strategy = leg.results, leg.meta["strategy"]
        if "ann_iterative_scan" in leg.meta:
            meta["ann_iterative_scan"] = leg.meta["ann_iterative_scan"]
    scope = _compile_scope(
        _scoped(
            tenant=tenant,
            subject_id=subject_id,
            project_id=project_id,
            include_superseded=include_superseded,
        )
    )
    keyword = _keyword(scope, query, fetch) if scope is not None else []
    if vector is None:
        results = [
            RecallHit(memory=memory, score=round(score, 6), selection_reason=REASON_KEYWORD)
            for memory, score in keyword[:limit]
        ]
    else:
        results = _fuse(semantic, keyword, limit)
    meta.update(
        {
            "total_count": len(results),
            "fallback": False,
            "reason": None,
            "underfilled": len(results) < limit,
            "strategy": strategy,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
        }
    )
    return RecallResult(results=results, meta=meta)


def _terms(query: str) -> list[str]:
    seen: list[str] = []
    for word in _WORD.findall(query.lower()):
        if len(word) >= FALLBACK_MIN_TERM_LENGTH and word not in seen:
            seen.append(word)
    return seen[:FALLBACK_MAX_TERMS] or [query.strip().lower()]


def _fallback_scope(*, tenant: Tenant, subject_id: str, project_id: uuid.UUID | None) -> Any:
    """The subject's live rows, embedded or not, on the OLTP repo, through the scope guard."""
    queryset = Memory.objects.using(PRIMARY).filter(
        project_partition(project_id=project_id),
        tenant_id=tenant.pk,
        subject_id=subject_id,
        superseded_by_id__isnull=True,
    )
    return require_scope(queryset, tenant_id=tenant.pk, subject_id=subject_id)


def _fallback(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    reason: str,
    mode: str,
) -> RecallResult:
    """No vectors (or no heavy-read capacity): keyword ranking in the same scope, on the OLTP
    repo (spec "Graceful degradation"), topped up with a recent-first substring match for
    what word matching misses (``catalog`` in ``catalogue``, a query of stop words only)."""
    scoped = _fallback_scope(tenant=tenant, subject_id=subject_id, project_id=project_id)
    scope = _compile_scope(scoped)
    keyword = [memory for memory, _score in _keyword(scope, query, limit)] if scope else []
    results = [
        RecallHit(memory=memory, score=None, selection_reason=REASON_KEYWORD_FALLBACK)
        for memory in keyword
    ]
    if len(results) < limit:
        terms = _terms(query)
        matches = Q()
        for term in terms:
            matches |= Q(text__icontains=term)
        hits = sum(
            (Case(When(text__icontains=term, then=Value(1)), default=Value(0)) for term in terms),
            start=Value(0),
        )
        queryset = (
            scoped.filter(matches)
            .exclude(pk__in=[memory.pk for memory in keyword])
            .annotate(term_hits=Coalesce(hits, Value(0), output_field=IntegerField()))
            .order_by("-term_hits", "-created_at", "id")
            .defer(*LIST_DEFERRED_FIELDS)[: limit - len(results)]
        )
        results += [
            RecallHit(memory=memory, score=None, selection_reason=REASON_ILIKE_FALLBACK)
            for memory in queryset
        ]
    return RecallResult(
        results=results,
        meta={
            "total_count": len(results),
            "fallback": True,
            "reason": reason,
            "underfilled": len(results) < limit,
            "strategy": STRATEGY_FALLBACK,
            "mode": mode,
        },
    )
