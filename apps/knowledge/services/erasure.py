"""Erasure of the wiki's share of a subject or a tenant (helpers for the memory app's erasure).

Each helper deletes (or, with ``dry_run``, only counts) inside the caller's transaction and
returns the rows per kind. Scope-owned for a subject: its owner-visible articles, every article
whose source is one of its memories, the links and access events of those articles, and the
access events it caused. Tenant-visible articles it wrote are the tenant's shared knowledge and
stay (see docs/operators.md, "Erasure").
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db.models import Q, QuerySet

from apps.knowledge.models import Article, ArticleAccessEvent, ArticleLink, ArticleVisibility
from apps.tenancy.models import Tenant


def _articles_of_subject(
    *, tenant: Tenant, subject_id: str, memory_ids: Sequence[uuid.UUID]
) -> QuerySet[Article]:
    return Article.objects.filter(tenant=tenant).filter(
        Q(visibility=ArticleVisibility.OWNER, owner_agent_id=subject_id)
        | Q(source_memory_id__in=list(memory_ids))
    )


def knowledge_erase_subject(
    *, tenant: Tenant, subject_id: str, memory_ids: Sequence[uuid.UUID], dry_run: bool
) -> dict[str, int]:
    article_ids = list(
        _articles_of_subject(
            tenant=tenant, subject_id=subject_id, memory_ids=memory_ids
        ).values_list("pk", flat=True)
    )
    links = ArticleLink.objects.filter(tenant=tenant).filter(
        Q(from_article_id__in=article_ids) | Q(to_article_id__in=article_ids)
    )
    events = ArticleAccessEvent.objects.filter(tenant=tenant).filter(
        Q(subject_id=subject_id) | Q(article_id__in=article_ids)
    )
    articles = Article.objects.filter(tenant=tenant, pk__in=article_ids)
    counts = {
        "article_access_events": events.count(),
        "article_links": links.count(),
        "articles": len(article_ids),
    }
    if not dry_run:
        events.delete()
        links.delete()
        articles.delete()
    return counts


def knowledge_erase_tenant(*, tenant: Tenant, dry_run: bool) -> dict[str, int]:
    querysets: dict[str, QuerySet[ArticleAccessEvent] | QuerySet[ArticleLink] | QuerySet[Article]]
    querysets = {
        "article_access_events": ArticleAccessEvent.objects.filter(tenant=tenant),
        "article_links": ArticleLink.objects.filter(tenant=tenant),
        "articles": Article.objects.filter(tenant=tenant),
    }
    counts = {kind: queryset.count() for kind, queryset in querysets.items()}
    if not dry_run:
        for queryset in querysets.values():
            queryset.delete()
    return counts
