"""Recall: the subject's own memories ranked by meaning, index-safe and never underfilled.

Strategy per query (docs/memory.md has the measurements):

* ``exact`` — the subject has at most ``MEMORY_EXACT_SCAN_MAX_ROWS`` live embedded rows: every
  one of them is scored through the (tenant, subject) btree and the top-k taken. Recall is 1.0
  by construction. The ORDER BY is ``distance + 0``, an expression the HNSW index cannot
  serve, so no planner change can silently turn this read into an approximate one.
* ``ann`` — a larger subject: pgvector's iterative HNSW scan (``relaxed_order``) with the
  scope as residual filters, re-sorted exactly. If the index still hands back fewer than k
  rows while the subject has more, the read is completed by the exact scan, so ``underfilled``
  means the subject really has fewer rows.

Embeddings unavailable or the heavy-read pool shed → a scoped, recent-first text match on
the OLTP repo (``fallback: true``, ``score: null``). Every semantic read goes through
:func:`apps.core.repos.heavy_read_memories`, the structural (tenant, subject) guard.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Case, ExpressionWrapper, F, FloatField, IntegerField, Q, Value, When
from django.db.models.functions import Coalesce
from pgvector.django import CosineDistance

from apps.core.db.routers import HEAVY_READ, PRIMARY
from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.core.repos import heavy_read_memories
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
    queryset = Memory.objects.filter(
        tenant_id=tenant.pk, subject_id=subject_id, embedding__isnull=False
    ).filter(project_partition(project_id=project_id))
    if not include_superseded:
        queryset = queryset.filter(superseded_by__isnull=True)
    return heavy_read_memories(queryset, tenant_id=tenant.pk, subject_id=subject_id)


def _exact(queryset: Any, vector: list[float], limit: int) -> list[tuple[Memory, float]]:
    ranked = (
        queryset.annotate(distance=CosineDistance("embedding", vector))
        # `+ 0` keeps this an exact scan: HNSW can only serve ORDER BY on the bare operator.
        .order_by(ExpressionWrapper(F("distance") + Value(0.0), output_field=FloatField()), "id")
        .defer(*LIST_DEFERRED_FIELDS)[:limit]
    )
    return [(memory, float(memory.distance)) for memory in ranked]


def _ann(queryset: Any, vector: list[float], limit: int) -> list[tuple[Memory, float]]:
    with transaction.atomic(using=HEAVY_READ), connections[HEAVY_READ].cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)",
            [str(max(settings.MEMORY_HNSW_EF_SEARCH, limit))],
        )
        cursor.execute(
            "SELECT set_config('hnsw.max_scan_tuples', %s, true)",
            [str(settings.MEMORY_HNSW_MAX_SCAN_TUPLES)],
        )
        ranked = list(
            queryset.annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance")
            .defer(*LIST_DEFERRED_FIELDS)[:limit]
        )
    # relaxed_order may return neighbours slightly out of order; the final order is exact.
    ranked.sort(key=lambda memory: (memory.distance, str(memory.pk)))
    return [(memory, float(memory.distance)) for memory in ranked]


def _semantic(
    *,
    tenant: Tenant,
    subject_id: str,
    vector: list[float],
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
) -> RecallResult:
    started = time.perf_counter()
    queryset = _scoped(
        tenant=tenant,
        subject_id=subject_id,
        project_id=project_id,
        include_superseded=include_superseded,
    )
    threshold = settings.MEMORY_EXACT_SCAN_MAX_ROWS
    # Bounded count: at most threshold + 1 index entries are read, whatever the subject's size.
    candidates = queryset.order_by().values("pk")[: threshold + 1].count()
    meta: dict[str, Any] = {}
    if include_superseded or candidates <= threshold:
        strategy = STRATEGY_EXACT
        ranked = _exact(queryset, vector, limit)
        if not include_superseded:
            meta["ann_iterative_scan"] = "off"
    else:
        strategy = STRATEGY_ANN
        ranked = _ann(queryset, vector, limit)
        meta["ann_iterative_scan"] = "applied"
        if len(ranked) < limit:
            # The index gave up before k rows (max_scan_tuples); finish exactly.
            strategy = "ann+exact"
            ranked = _exact(queryset, vector, limit)
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
