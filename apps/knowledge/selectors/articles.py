"""Reads of articles and links, always through :func:`apps.knowledge.viewer.visible_q`."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery
from django.db.models import Q, QuerySet

from apps.core.db.pagination import Page, paginate
from apps.knowledge.exceptions import ArticleNotFound
from apps.knowledge.models import (
    TEXT_SEARCH_CONFIG,
    Article,
    ArticleLink,
    ArticleStatus,
)
from apps.knowledge.viewer import Viewer, visible_q
from apps.projects.scoping import project_partition
from apps.tenancy.models import Tenant

# Lists and link summaries never need the body, the vector or the tsvector.
SUMMARY_DEFERRED_FIELDS = ("body", "embedding", "search_vector")
DETAIL_DEFERRED_FIELDS = ("embedding", "search_vector")


@dataclass(frozen=True)
class LinkView:
    """One link seen from ``article_id``: ``direction`` is ``out`` (this article links to the
    other) or ``in`` (the other links here)."""

    article_id: uuid.UUID
    kind: str
    direction: str
    other: Article


def _parse_ids(ids: Iterable[object]) -> list[uuid.UUID]:
    parsed: list[uuid.UUID] = []
    for value in ids:
        if isinstance(value, uuid.UUID):
            parsed.append(value)
            continue
        try:
            parsed.append(uuid.UUID(str(value).strip()))
        except (TypeError, ValueError, AttributeError):
            continue
    return parsed


def visible_article_ids(*, tenant: Tenant, viewer: Viewer, ids: Iterable[object]) -> set[uuid.UUID]:
    """The subset of ``ids`` naming articles of ``tenant`` that ``viewer`` can see.

    The one function other apps use to validate article ids (cross-links, referenced):
    unknown, malformed, another tenant's and invisible ids are simply absent from the result,
    so a caller cannot tell them apart. Archived articles are never included.
    """
    parsed = _parse_ids(ids)
    if not parsed:
        return set()
    return set(
        Article.objects.filter(tenant=tenant, pk__in=parsed)
        .filter(visible_q(viewer))
        .values_list("pk", flat=True)
    )


def article_get(
    *, tenant: Tenant, viewer: Viewer, article_id: uuid.UUID, include_archived: bool = True
) -> Article:
    """One article with its body. Invisible, foreign and missing are the same 404.

    Curators can read an archived article by id (``include_archived``); agents never can.
    """
    article = (
        Article.objects.filter(tenant=tenant, pk=article_id)
        .filter(visible_q(viewer, include_archived=include_archived and viewer.can_curate))
        .defer(*DETAIL_DEFERRED_FIELDS)
        .first()
    )
    if article is None:
        raise ArticleNotFound("Article not found.")
    return article


def article_list(
    *,
    tenant: Tenant,
    viewer: Viewer,
    status: str | None = None,
    category: str | None = None,
    tag: str | None = None,
    project_id: uuid.UUID | None = None,
    q: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[Article]:
    """Visible articles ordered by title (summaries: no body).

    Archived articles appear only when a curator asks for ``status=archived``. Without
    ``project_id`` every partition is listed; with it, global ∪ that project. ``q`` is a
    full-text filter in websearch syntax (ranking is the search endpoint's job).
    """
    include_archived = status == ArticleStatus.ARCHIVED
    queryset: QuerySet[Article] = Article.objects.filter(tenant=tenant).filter(
        visible_q(viewer, include_archived=include_archived)
    )
    if status:
        queryset = queryset.filter(status=status)
    if category:
        queryset = queryset.filter(category=category)
    if tag:
        queryset = queryset.filter(tags__contains=[tag.strip().lower()])
    if project_id is not None:
        queryset = queryset.filter(project_partition(project_id=project_id))
    if q and q.strip():
        queryset = queryset.filter(
            search_vector=SearchQuery(q, search_type="websearch", config=TEXT_SEARCH_CONFIG)
        )
    queryset = queryset.defer(*SUMMARY_DEFERRED_FIELDS).order_by("title", "id")
    return paginate(queryset, limit=limit, offset=offset)


def article_links(
    *, tenant: Tenant, viewer: Viewer, article_ids: Sequence[uuid.UUID]
) -> list[LinkView]:
    """Links touching ``article_ids`` whose other end the viewer can see (two queries; one
    when there are none)."""
    if not article_ids:
        return []
    ids = list(article_ids)
    links = list(
        ArticleLink.objects.filter(tenant=tenant)
        .filter(Q(from_article_id__in=ids) | Q(to_article_id__in=ids))
        .order_by("created_at", "id")
    )
    if not links:
        return []
    wanted = set(ids)
    endpoints = {end for link in links for end in (link.from_article_id, link.to_article_id)}
    others = {
        article.pk: article
        for article in Article.objects.filter(tenant=tenant, pk__in=endpoints)
        .filter(visible_q(viewer))
        .defer(*SUMMARY_DEFERRED_FIELDS)
    }
    views: list[LinkView] = []
    for link in links:
        if link.from_article_id in wanted and link.to_article_id in others:
            views.append(
                LinkView(
                    article_id=link.from_article_id,
                    kind=link.kind,
                    direction="out",
                    other=others[link.to_article_id],
                )
            )
        if link.to_article_id in wanted and link.from_article_id in others:
            views.append(
                LinkView(
                    article_id=link.to_article_id,
                    kind=link.kind,
                    direction="in",
                    other=others[link.from_article_id],
                )
            )
    return views


@dataclass(frozen=True)
class DerivedArticle:
    """An article derived from a memory, as the memory's provenance shows it."""

    id: uuid.UUID
    title: str
    status: str
    visibility: str
    relation: str  # "graduated" (its source is the memory) | "deduplicated_into"


def articles_derived_from_memory(
    *, tenant: Tenant, memory_id: uuid.UUID, graduated_article_id: uuid.UUID | None
) -> list[DerivedArticle]:
    """Articles whose source is ``memory_id``, and the article its graduation was
    deduplicated into (``graduated_article_id``, when that one has another source)."""
    rows = (
        Article.objects.filter(tenant=tenant)
        .filter(Q(source_memory_id=memory_id) | Q(pk=graduated_article_id))
        .order_by("created_at", "id")
        .values_list("pk", "title", "status", "visibility", "source_memory_id")
    )
    return [
        DerivedArticle(
            id=pk,
            title=title,
            status=status,
            visibility=visibility,
            relation="graduated" if source == memory_id else "deduplicated_into",
        )
        for pk, title, status, visibility, source in rows
    ]
