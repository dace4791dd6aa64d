"""The vector ranking: exact per-subject scan, or iterative HNSW completed exactly.

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

Only vectors of the query's model are ranked (``ROWS_VECTORS``: ``embedding_model`` is the
tenant's current fingerprint). A row another model embedded is skipped like a pending one, and
the keyword leg still finds it, until the background migration re-embeds it
(docs/embeddings.md, "Which model made a vector"). The size check counts every embedded row,
whatever its model: in the steady state that is the same number, and mid-migration it only
sends a large subject to the ANN path a little early.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.core.db.cursors import server_bound_cursor
from apps.core.db.filters import RecordFilter
from apps.core.db.iterative_scan import OFF, iterative_scan
from apps.core.vectors import VectorParam
from apps.memory.models import Memory
from apps.memory.selectors.recall.results import (
    STRATEGY_ANN,
    STRATEGY_ANN_EXACT,
    STRATEGY_EXACT,
    RecallHit,
    RecallResult,
    envelope_meta,
)
from apps.memory.selectors.recall.scope import (
    ROWS_EMBEDDED,
    ROWS_VECTORS,
    CompiledScope,
    fetch_ranked,
    fetch_values,
    quote,
    recall_scope,
    select_list,
)
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_fingerprint

#: Nearest first: ``(Memory, distance)`` when the statement read rows, ``(id, distance)`` when not.
Ranked = list[tuple[Any, float]]


def _exact(
    scope: CompiledScope,
    vector: VectorParam,
    limit: int,
    *,
    threshold: int | None = None,
    sizing: CompiledScope | None = None,
    rows: bool = True,
) -> Ranked:
    """The scope's true top-``limit`` rows, nearest first: every row in scope is scored.

    The ranking step reads ``(id, distance)`` only, so Postgres answers it with an index-only
    scan of the covering index (migration 0006): one subject's vectors sit together in its
    leaf pages instead of on one heap page per row. With ``rows``, the same statement then
    fetches each winner's row by primary key (a lateral lookup, so no estimate can turn it
    into a rescan of the subject per winner), under the same scope predicate; without, the
    ranking is the whole statement and ids come back.

    ``threshold``: rank nothing unless ``sizing`` (the scope's embedded rows of any model)
    holds at most that many rows — an uncorrelated NOT EXISTS that Postgres evaluates once
    (an InitPlan), reading at most threshold + 1 entries of the narrow live-scope index
    (migration 0005) and no heap.
    """
    table, pk = scope.table, quote(scope.using, "id")
    embedding = quote(scope.using, "embedding")
    # Identifiers and WHERE clauses come from Django; every value is a parameter.
    ranking = [
        f"SELECT {table}.{pk} AS id, ({table}.{embedding} <=> %s) + 0 AS distance "  # noqa: S608
        f"FROM {table} WHERE {scope.where}"
    ]
    params: list[Any] = [vector, *scope.params]
    if threshold is not None:
        counted = sizing or scope
        ranking.append(
            f" AND NOT EXISTS (SELECT 1 FROM {table} WHERE {counted.where} OFFSET %s LIMIT 1)"  # noqa: S608
        )
        params += [*counted.params, threshold]
    ranking.append(f" ORDER BY distance, {table}.{pk} LIMIT %s")
    params.append(limit)
    if not rows:
        return [
            (pk_, float(distance))
            for pk_, distance in fetch_values(scope, "".join(ranking), params)
        ]
    sql = (
        f"SELECT winner.*, ranked.distance FROM ({''.join(ranking)}) AS ranked "  # noqa: S608
        f"CROSS JOIN LATERAL (SELECT {select_list(scope.using)} FROM {table} "
        f"WHERE {table}.{pk} = ranked.id AND {scope.where}) AS winner "
        f"ORDER BY ranked.distance, ranked.id"
    )
    return fetch_ranked(scope, sql, [*params, *scope.params])


def _approximate(scope: CompiledScope, vector: VectorParam, fetch: int, *, rows: bool) -> Ranked:
    """The first ``fetch`` rows in scope the HNSW index hands back, by the bare operator."""
    table = scope.table
    embedding = quote(scope.using, "embedding")
    columns = select_list(scope.using) if rows else f"{table}.{quote(scope.using, 'id')}"
    sql = (
        f"SELECT {columns}, ({table}.{embedding} <=> %s) AS distance "  # noqa: S608
        f"FROM {table} WHERE {scope.where} ORDER BY distance LIMIT %s"
    )
    params = [vector, *scope.params, fetch]
    if not rows:
        return [(pk, float(distance)) for pk, distance in fetch_values(scope, sql, params)]
    return fetch_ranked(scope, sql, params)


def _has_rows(scope: CompiledScope) -> bool:
    with server_bound_cursor(scope.using) as cursor:
        cursor.execute(
            f"SELECT 1 FROM {scope.table} WHERE {scope.where} LIMIT 1",  # noqa: S608
            scope.params,
        )
        return cursor.fetchone() is not None


def _ann(
    scope: CompiledScope, vector: VectorParam, limit: int, *, rows: bool, iterative: bool
) -> Ranked:
    ef_search = str(max(settings.MEMORY_HNSW_EF_SEARCH, limit))
    with transaction.atomic(using=scope.using), server_bound_cursor(scope.using) as cursor:
        # One round trip for every knob, each local to this transaction:
        # - relaxed_order: the iterative scan keeps walking the graph until `limit` rows pass
        #   the scope filter (or max_scan_tuples), instead of filtering one ef_search pool;
        # - enable_sort off: the only plan left without a Sort is the HNSW index scan, so the
        #   planner cannot pick the (tenant, subject) btree + sort for a large subject and turn
        #   the ANN read into a slow exact one (PG counts disabled nodes; cost is moot).
        if iterative:
            cursor.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                "set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.max_scan_tuples', %s, true), "
                "set_config('enable_sort', 'off', true)",
                [ef_search, str(settings.MEMORY_HNSW_MAX_SCAN_TUPLES)],
            )
        else:
            # A pgvector without the iterative scan knows neither of its settings (setting one
            # would be an error): one ef_search pool, and the caller completes a short read.
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('enable_sort', 'off', true)",
                [ef_search],
            )
        ranked = _approximate(
            scope, vector, limit * max(1, settings.MEMORY_HNSW_CANDIDATES_PER_RESULT), rows=rows
        )
    # relaxed_order returns neighbours roughly in order; the final order (and cut) is exact.
    ranked.sort(key=lambda pair: (pair[1], str(_pk(pair[0]))))
    return ranked[:limit]


def _pk(item: Memory | uuid.UUID) -> uuid.UUID:
    return item.pk if isinstance(item, Memory) else item


@dataclass(frozen=True)
class VectorRanking:
    """The vector leg's nearest ``(Memory or id, distance)`` pairs, and how it read them."""

    ranked: Ranked
    strategy: str
    meta: dict[str, Any]
    #: The fingerprint of the model whose vectors were ranked (the query's).
    embedding_model: str = ""


def _vector_ranking(
    *,
    tenant: Tenant,
    subject_id: str,
    vector: Sequence[float],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    rows: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> VectorRanking:
    model = tenant_embedding_fingerprint(tenant=tenant)
    scope, sizing = (
        recall_scope(
            tenant_id=tenant.pk,
            subject_id=subject_id,
            project_id=project_id,
            include_superseded=include_superseded,
            as_of=as_of,
            narrowing=narrowing,
            rows=rows_shape,
            embedding_model=model if rows_shape == ROWS_VECTORS else None,
        )
        for rows_shape in (ROWS_VECTORS, ROWS_EMBEDDED)
    )
    # Packed once per recall and shared by every statement (this sits on the hot path).
    query_vector = VectorParam(vector)
    meta: dict[str, Any] = {}
    strategy = STRATEGY_EXACT
    if include_superseded or as_of is not None:
        # Past versions are not in the partial HNSW index (live rows only): rank exactly.
        ranked = _exact(scope, query_vector, limit, rows=rows)
    else:
        meta["ann_iterative_scan"] = OFF
        # The common case is one statement: the exact top-k behind a one-time check that the
        # subject has at most `threshold` rows. A larger subject returns no rows, and so does
        # an empty one; a LIMIT 1 probe tells the two apart.
        threshold = settings.MEMORY_EXACT_SCAN_MAX_ROWS
        ranked = _exact(scope, query_vector, limit, threshold=threshold, sizing=sizing, rows=rows)
        if not ranked and _has_rows(scope):
            strategy = STRATEGY_ANN
            support = iterative_scan(scope.using)
            meta.update(support.meta())
            ranked = _ann(scope, query_vector, limit, rows=rows, iterative=support.available)
            if len(ranked) < limit:
                # The index gave up before k rows (max_scan_tuples, or one ef_search pool
                # without the iterative scan); finish exactly.
                strategy = STRATEGY_ANN_EXACT
                ranked = _exact(scope, query_vector, limit, rows=rows)
    return VectorRanking(ranked=ranked, strategy=strategy, meta=meta, embedding_model=model)


def semantic_ranking(
    *,
    tenant: Tenant,
    subject_id: str,
    vector: Sequence[float],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> VectorRanking:
    """The vector leg of ``hybrid``: the nearest ``limit`` ids and distances, no rows (only
    the fused winners' rows are read, by :func:`apps.memory.selectors.recall.scope.fetch_rows`)."""
    return _vector_ranking(
        tenant=tenant,
        subject_id=subject_id,
        vector=vector,
        project_id=project_id,
        limit=limit,
        include_superseded=include_superseded,
        rows=False,
        as_of=as_of,
        narrowing=narrowing,
    )


def semantic_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    vector: Sequence[float],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> RecallResult:
    """The subject's ``limit`` nearest memories to ``vector`` (``mode=semantic``)."""
    started = time.perf_counter()
    leg = _vector_ranking(
        tenant=tenant,
        subject_id=subject_id,
        vector=vector,
        project_id=project_id,
        limit=limit,
        include_superseded=include_superseded,
        rows=True,
        as_of=as_of,
        narrowing=narrowing,
    )
    results = [
        RecallHit(memory=memory, score=1.0 - distance, similarity=1.0 - distance)
        for memory, distance in leg.ranked
        if isinstance(memory, Memory)
    ]
    meta = dict(leg.meta)
    meta.update(envelope_meta(results=results, limit=limit, strategy=leg.strategy))
    meta["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return RecallResult(results=results, meta=meta)
