"""Reading a tenant's wiki out as portable :class:`ArticleRecord`s (``knowledge_export``)."""

from __future__ import annotations

import uuid
from collections import defaultdict

from apps.knowledge.models import Article, ArticleLink, ArticleStatus
from apps.knowledge.transfer import ArticleRecord, LinkRecord
from apps.projects.selectors import project_list
from apps.tenancy.models import Tenant


def knowledge_export_records(
    *, tenant: Tenant, include_archived: bool = False
) -> list[ArticleRecord]:
    """Every article of the tenant (all visibilities; archived ones only when asked), oldest
    first, with links to the other exported articles by title and projects by slug."""
    articles = Article.objects.filter(tenant=tenant).defer("embedding", "search_vector")
    if not include_archived:
        articles = articles.exclude(status=ArticleStatus.ARCHIVED)
    rows = list(articles.order_by("created_at", "id"))
    titles = {article.pk: article.title for article in rows}
    links: dict[uuid.UUID, list[LinkRecord]] = defaultdict(list)
    for link in ArticleLink.objects.filter(
        tenant=tenant, from_article_id__in=list(titles)
    ).order_by("created_at", "id"):
        if link.to_article_id in titles:
            links[link.from_article_id].append(
                LinkRecord(kind=link.kind, to=titles[link.to_article_id])
            )
    slugs = {project.pk: project.slug for project in project_list(tenant=tenant)}
    return [
        ArticleRecord(
            title=article.title,
            body=article.body,
            category=article.category,
            tags=list(article.tags),
            status=article.status,
            visibility=article.visibility,
            owner_agent_id=article.owner_agent_id,
            source=article.source,
            source_memory_id=str(article.source_memory_id) if article.source_memory_id else None,
            project=slugs.get(article.project_id) if article.project_id else None,
            links=links.get(article.pk, []),
            id=str(article.pk),
            created_at=article.created_at.isoformat(),
        )
        for article in rows
    ]
