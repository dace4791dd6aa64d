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
and runs on the heavy-read alias; rows come back as ``Memory`` instances through ``raw()``.

Embeddings unavailable or the heavy-read pool shed → a scoped, recent-first text match on
the OLTP repo (``fallback: true``, ``score: null``).
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
from django.db import connections, transaction
from django.db.models import Case, IntegerField, Q, Value, When
from django.db.models.functions import Coalesce

from apps.core.db.routers import PRIMARY
from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.core.repos import ScopeViolation, heavy_read_memories
from apps.memory.exceptions import MemoryErrorCode
from apps.memory.models import Memory
from apps.memory.recall_bump import schedule_recall_bump
from apps.memory.selectors.listing import LIST_DEFERRED_FIELDS
from apps.memory.selectors.scoping import project_partition
from apps.providers.embeddings import EmbeddingsUnavailable, embed_query
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

STRATEGY_EXACT = "exact"
STRATEGY_ANN = "ann"
STRATEGY_ANN_EXACT = "ann+exact"
STRATEGY_FALLBACK = "fallback"
FALLBACK_MAX_TERMS = 8
FALLBACK_MIN_TERM_LENGTH = 3
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float | None


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


def memory_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None = None,
    limit: int = 10,
    include_superseded: bool = False,
    query_embedding: list[float] | None = None,
) -> RecallResult:
    """The subject's top-``limit`` memories for ``query`` (spec envelope ``{results, meta}``).

    ``query_embedding`` lets a caller that already embedded the query (merged recall) reuse it.
    """
    query = validate_recall_query(query)
    limit = max(1, min(int(limit), settings.MEMORY_RECALL_MAX_LIMIT))
    if query_embedding is None:
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
            )
    try:
        with heavy_read_slot(tenant_id=tenant.pk):
            result = _semantic(
                tenant=tenant,
                subject_id=subject_id,
                vector=query_embedding,
                project_id=project_id,
                limit=limit,
                include_superseded=include_superseded,
            )
    except HeavyReadShed as exc:
        return _fallback(
            tenant=tenant,
            subject_id=subject_id,
            query=query,
            project_id=project_id,
            limit=limit,
            reason=exc.reason,
        )
    schedule_recall_bump(
        memory_ids=[
            hit.memory.pk
            for hit in result.results
            if hit.score is not None and hit.score >= settings.MEMORY_RECALL_BUMP_MIN_SCORE
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


@functools.cache
def _select_list(using: str) -> str:
    """Every column but the vector (nothing downstream reads it; parsing it costs)."""
    quote = connections[using].ops.quote_name
    table = quote(Memory._meta.db_table)
    return ", ".join(
        f"{table}.{quote(field.column)}"
        for field in Memory._meta.concrete_fields
        if field.column and field.name not in LIST_DEFERRED_FIELDS
    )


def _quote(using: str, name: str) -> str:
    return str(connections[using].ops.quote_name(name))


def _vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form, built once per recall and shared by every statement.

    Nine significant digits round-trip a float32 (what the column stores); ``%g`` is about
    twice as fast as ``repr`` here, and this sits on every recall.
    """
    return "[" + ",".join(["%.9g" % value for value in vector]) + "]"  # noqa: UP031


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
    rows = Memory.objects.db_manager(scope.using).raw(sql, params)
    # `distance` is the extra column RawQuerySet sets on each instance.
    return [(memory, float(getattr(memory, "distance"))) for memory in rows]  # noqa: B009


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
    literal = _vector_literal(vector)
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
    results = [RecallHit(memory=memory, score=1.0 - distance) for memory, distance in ranked]
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


def _fallback(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    reason: str,
) -> RecallResult:
    """Recent-first text match in the same scope, on the OLTP repo (spec "Graceful degradation")."""
    terms = _terms(query)
    matches = Q()
    for term in terms:
        matches |= Q(text__icontains=term)
    hits = sum(
        (Case(When(text__icontains=term, then=Value(1)), default=Value(0)) for term in terms),
        start=Value(0),
    )
    queryset = (
        Memory.objects.using(PRIMARY)
        .filter(tenant_id=tenant.pk, subject_id=subject_id, superseded_by__isnull=True)
        .filter(project_partition(project_id=project_id))
        .filter(matches)
        .annotate(term_hits=Coalesce(hits, Value(0), output_field=IntegerField()))
        .order_by("-term_hits", "-created_at", "id")
        .defer(*LIST_DEFERRED_FIELDS)[:limit]
    )
    results = [RecallHit(memory=memory, score=None) for memory in queryset]
    return RecallResult(
        results=results,
        meta={
            "total_count": len(results),
            "fallback": True,
            "reason": reason,
            "underfilled": len(results) < limit,
            "strategy": STRATEGY_FALLBACK,
        },
    )
