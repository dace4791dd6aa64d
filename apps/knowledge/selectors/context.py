"""The deep read: full bodies of the top results plus the articles they link to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from apps.knowledge.models import Article
from apps.knowledge.selectors.articles import (
    DETAIL_DEFERRED_FIELDS,
    LinkView,
    article_links,
)
from apps.knowledge.selectors.search import SearchHit, SearchResult, knowledge_search
from apps.knowledge.viewer import Viewer, visible_q
from apps.tenancy.models import Tenant


@dataclass
class KnowledgeContext:
    results: list[SearchHit]
    #: Links touching each result, by the result's id.
    links: dict[uuid.UUID, list[LinkView]]
    #: Full linked articles that are not themselves results (visible ones only).
    linked: list[Article]
    #: The search the context was built from; serving it records it (knowledge_search_record).
    search: SearchResult
    meta: dict[str, Any] = field(default_factory=dict)


def knowledge_context(
    *,
    tenant: Tenant,
    viewer: Viewer,
    query: object,
    limit: int = 5,
    project_id: uuid.UUID | None = None,
) -> KnowledgeContext:
    """Search, then load what the results link to (the search is recorded by whoever serves it).

    Links are followed one hop, both directions, and only to articles the viewer can see;
    at most ``KNOWLEDGE_CONTEXT_MAX_LINKED`` linked articles are returned.
    """
    limit = max(1, min(int(limit), settings.KNOWLEDGE_CONTEXT_MAX_LIMIT))
    result = knowledge_search(
        tenant=tenant,
        viewer=viewer,
        query=query,
        limit=limit,
        project_id=project_id,
    )
    result_ids = [hit.article.pk for hit in result.results]
    views = article_links(tenant=tenant, viewer=viewer, article_ids=result_ids)
    links: dict[uuid.UUID, list[LinkView]] = {pk: [] for pk in result_ids}
    for view in views:
        links[view.article_id].append(view)
    linked_ids: list[uuid.UUID] = []
    for view in views:
        other = view.other.pk
        if other not in result_ids and other not in linked_ids:
            linked_ids.append(other)
    linked_ids = linked_ids[: settings.KNOWLEDGE_CONTEXT_MAX_LINKED]
    loaded = (
        {
            article.pk: article
            for article in Article.objects.filter(tenant=tenant, pk__in=linked_ids)
            .filter(visible_q(viewer))
            .defer(*DETAIL_DEFERRED_FIELDS)
        }
        if linked_ids
        else {}
    )
    return KnowledgeContext(
        results=result.results,
        links=links,
        linked=[loaded[pk] for pk in linked_ids if pk in loaded],
        search=result,
        meta={**result.meta, "linked_count": len(loaded)},
    )
