"""Retrieval metrics (the surfaced → opened → referenced funnel over a time window) and the
article counts operator stats show."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count
from django.utils import timezone

from apps.knowledge.models import AccessType, Article, ArticleAccessEvent, ArticleStatus
from apps.tenancy.models import Tenant

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


@dataclass(frozen=True)
class RetrievalMetrics:
    window: str
    surfaced: int
    opened: int
    referenced: int

    @property
    def open_rate(self) -> float:
        return round(self.opened / self.surfaced, 4) if self.surfaced else 0.0

    @property
    def reference_rate(self) -> float:
        return round(self.referenced / self.surfaced, 4) if self.surfaced else 0.0


def _distinct_pairs(*, tenant: Tenant, access_type: str, since: object) -> int:
    # SELECT COUNT(*) FROM (SELECT DISTINCT search_id, article_id …). Only pairs with a
    # search are steps of the funnel: an article opened without one (a deep read no search
    # led to) is recorded but counts nowhere, so every opened pair is a surfaced pair and
    # open_rate stays within [0, 1].
    return int(
        ArticleAccessEvent.objects.filter(
            tenant=tenant, access_type=access_type, created_at__gte=since
        )
        .exclude(search_id=None)
        .values("search_id", "article_id")
        .distinct()
        .count()
    )


def knowledge_retrieval_metrics(*, tenant: Tenant, window: str = "7d") -> RetrievalMetrics:
    """Distinct (search_id, article_id) pairs per access type in the last ``window``.

    Counting pairs, not rows, is what makes a repeated ``referenced`` call (or a re-opened
    article) unable to move the figures. An ``opened`` row counts only when a search of the
    opener's surfaced the article (checked when it is recorded); one without a search counts
    nowhere. ``window`` is one of ``24h``, ``7d``, ``30d``.
    """
    if window not in WINDOWS:
        raise ValueError(f"unknown window {window!r}; choose one of {sorted(WINDOWS)}")
    since = timezone.now() - WINDOWS[window]
    return RetrievalMetrics(
        window=window,
        surfaced=_distinct_pairs(tenant=tenant, access_type=AccessType.SURFACED, since=since),
        opened=_distinct_pairs(tenant=tenant, access_type=AccessType.OPENED, since=since),
        referenced=_distinct_pairs(tenant=tenant, access_type=AccessType.REFERENCED, since=since),
    )


def article_status_counts(*, tenants: Sequence[Tenant]) -> dict[uuid.UUID, dict[str, int]]:
    """Articles per status for each of ``tenants`` (one grouped query; every status present,
    zero when none). For operator stats across tenants."""
    counts = {tenant.pk: dict.fromkeys(ArticleStatus.values, 0) for tenant in tenants}
    rows = (
        Article.objects.filter(tenant__in=list(tenants))
        .values("tenant_id", "status")
        .annotate(count=Count("pk"))
        .order_by()
    )
    for row in rows:
        counts[row["tenant_id"]][row["status"]] = row["count"]
    return counts
