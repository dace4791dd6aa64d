"""Retrieval metrics (the surfaced → opened → referenced funnel over a time window), the
article counts operator stats show, and those the article quotas check."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.db import connections
from django.db.models import Count
from django.utils import timezone

from apps.core.db.routers import PRIMARY
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


@dataclass(frozen=True)
class ArticleQuotaCounts:
    #: Every article of the tenant, archived ones included (they are still stored).
    tenant: int
    #: Those the author wrote.
    author: int


ARTICLE_QUOTA_COUNTS_SQL = """
SELECT COALESCE(tenant_usage.articles, 0), COALESCE(author_usage.articles, 0)
  FROM (SELECT 1) AS one
  LEFT JOIN knowledge_tenant_article_usage AS tenant_usage
    ON tenant_usage.tenant_id = %(tenant)s
  LEFT JOIN knowledge_author_article_usage AS author_usage
    ON author_usage.tenant_id = %(tenant)s AND author_usage.author_subject_id = %(author)s
"""


def article_quota_counts(*, tenant: Tenant, author_subject_id: str) -> ArticleQuotaCounts:
    """What the article quotas count, the tenant's articles and the author's, read from the
    counts triggers keep (migration 0006): two rows, whatever the tenant's size."""
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(ARTICLE_QUOTA_COUNTS_SQL, {"tenant": tenant.pk, "author": author_subject_id})
        tenant_count, author_count = cursor.fetchone()
    return ArticleQuotaCounts(tenant=int(tenant_count), author=int(author_count))


def article_author_counts(*, tenants: Sequence[Tenant]) -> dict[tuple[uuid.UUID, str], int]:
    """Articles per (tenant, author) for each of ``tenants``, from the same counts (one query;
    unattributed articles are left out). For operator stats across tenants."""
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT tenant_id, author_subject_id, articles FROM knowledge_author_article_usage"
            " WHERE tenant_id = ANY(%s::uuid[]) AND author_subject_id <> ''",
            [[str(tenant.pk) for tenant in tenants]],
        )
        return {(row[0], row[1]): int(row[2]) for row in cursor.fetchall()}
