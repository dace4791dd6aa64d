"""Recall without vectors: embeddings unavailable, or the heavy-read repo shed or failing.

The keyword ranking over the subject's live rows (embedded or not) on the OLTP repo, topped up
by a recent-first substring match for what word matching misses (spec "Graceful degradation":
``fallback: true``, a stable ``reason``, ``score: null``). A pending row keeps its fallback
``selection_reason`` (every hit here is keyword-only) and says ``embedding_status: pending``.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

from django.db.models import Case, IntegerField, Q, Value, When
from django.db.models.functions import Coalesce

from apps.core.db.filters import RecordFilter
from apps.core.db.routers import PRIMARY
from apps.core.repos import require_scope
from apps.memory.models import Memory
from apps.memory.selectors.listing import LIST_DEFERRED_FIELDS
from apps.memory.selectors.recall.keyword import Keywords, keyword_ranking
from apps.memory.selectors.recall.results import (
    REASON_ILIKE_FALLBACK,
    REASON_KEYWORD_FALLBACK,
    STRATEGY_FALLBACK,
    RecallHit,
    RecallResult,
)
from apps.memory.selectors.recall.scope import compile_scope
from apps.memory.selectors.validity import in_time
from apps.projects.scoping import project_partition
from apps.tenancy.models import Tenant

FALLBACK_MAX_TERMS = 8
FALLBACK_MIN_TERM_LENGTH = 3
_WORD = re.compile(r"\w+", re.UNICODE)


def _terms(query: str) -> list[str]:
    seen: list[str] = []
    for word in _WORD.findall(query.lower()):
        if len(word) >= FALLBACK_MIN_TERM_LENGTH and word not in seen:
            seen.append(word)
    return seen[:FALLBACK_MAX_TERMS] or [query.strip().lower()]


def _fallback_scope(
    *,
    tenant: Tenant,
    subject_id: str,
    project_id: uuid.UUID | None,
    as_of: datetime | None,
    narrowing: RecordFilter | None,
) -> Any:
    """The subject's live rows (or those valid at ``as_of``) that pass ``narrowing``,
    embedded or not, on the OLTP repo, through the scope guard."""
    queryset = Memory.objects.using(PRIMARY).filter(
        project_partition(project_id=project_id),
        in_time(include_superseded=False, as_of=as_of),
        narrowing.q if narrowing is not None else Q(),
        tenant_id=tenant.pk,
        subject_id=subject_id,
    )
    return require_scope(queryset, tenant_id=tenant.pk, subject_id=subject_id)


def fallback_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    reason: str,
    mode: str,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> RecallResult:
    """No vectors (or no heavy-read capacity): keyword ranking in the same scope, on the OLTP
    repo (spec "Graceful degradation"), topped up with a recent-first substring match for
    what word matching misses (``catalog`` in ``catalogue``, a query of stop words only)."""
    scoped = _fallback_scope(
        tenant=tenant,
        subject_id=subject_id,
        project_id=project_id,
        as_of=as_of,
        narrowing=narrowing,
    )
    scope = compile_scope(scoped)
    keywords = Keywords.of_recall(
        query=query, tenant=tenant, subject_id=subject_id, narrowing=narrowing, as_of=as_of
    )
    keyword = [row[0] for row in keyword_ranking(scope, keywords, limit)] if scope else []
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
            # Every row here was searched by its words only; these have no vector yet either.
            "pending_searched": scoped.filter(embedding__isnull=True).count(),
        },
    )
