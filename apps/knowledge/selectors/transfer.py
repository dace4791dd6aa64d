"""Reading a tenant's wiki out as portable :class:`ArticleRecord`s (``knowledge_export``)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from apps.knowledge.models import Article, ArticleLink, ArticleStatus
from apps.knowledge.transfer import (
    ARTICLE_STATE_FIELDS,
    ArticleRecord,
    ArticleSnapshot,
    ArticleState,
    LinkRecord,
    LinkSnapshot,
)
from apps.projects.selectors import project_list
from apps.tenancy.models import Tenant

ID_LOOKUP_CHUNK = 5_000


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


@dataclass(frozen=True)
class KnowledgeSnapshot:
    articles: list[ArticleSnapshot]
    links: list[LinkSnapshot]


def knowledge_snapshot(*, tenant: Tenant) -> KnowledgeSnapshot:
    """Every article of the tenant (archived too) and every link, exactly as stored, oldest
    first: the knowledge half of ``memory_export``. Three queries besides the projects'."""
    records = knowledge_export_records(tenant=tenant, include_archived=True)
    states = {
        row["id"]: row
        for row in Article.objects.filter(tenant=tenant).values("id", *ARTICLE_STATE_FIELDS)
    }
    articles = []
    for record in records:
        state = states[uuid.UUID(str(record.id))]
        embedding = state["embedding"]
        articles.append(
            ArticleSnapshot(
                record=replace(record, links=[]),
                state=ArticleState(
                    project_id=state["project_id"],
                    embedding=None if embedding is None else [float(v) for v in embedding],
                    embedding_content_hash=state["embedding_content_hash"],
                    embedded_at=state["embedded_at"],
                    version=state["version"],
                    published_at=state["published_at"],
                    updated_at=state["updated_at"],
                    embedding_model=state["embedding_model"],
                ),
            )
        )
    links = [
        LinkSnapshot(
            from_article_id=link.from_article_id,
            to_article_id=link.to_article_id,
            kind=link.kind,
            created_at=link.created_at,
            updated_at=link.updated_at,
        )
        for link in ArticleLink.objects.filter(tenant=tenant).order_by("created_at", "id")
    ]
    return KnowledgeSnapshot(articles=articles, links=links)


def article_ids_in_tenant(*, tenant: Tenant, ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
    """The subset of ``ids`` naming articles of ``tenant``, whatever their status or
    visibility: for an operator restore re-attaching references, never for agent reads
    (those go through ``visible_article_ids``)."""
    wanted = sorted(set(ids))
    found: set[uuid.UUID] = set()
    for start in range(0, len(wanted), ID_LOOKUP_CHUNK):
        chunk = wanted[start : start + ID_LOOKUP_CHUNK]
        found.update(
            Article.objects.filter(tenant=tenant, pk__in=chunk).values_list("pk", flat=True)
        )
    return found
