"""Erasure of the wiki's share of a subject or a tenant (a helper for the memory app's erasure).

It deletes (or, with ``dry_run``, only counts) inside the caller's transaction and
returns the rows per kind. Scope-owned for a subject: its owner-visible articles, every article
whose source is one of its memories, the links and access events of those articles, and the
access events it caused. Tenant-visible articles it wrote are the tenant's shared knowledge and
stay (see docs/operators.md, "Erasure").
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db.models import Q, QuerySet

from apps.core.db.erasure import erase_kinds
from apps.knowledge.models import Article, ArticleAccessEvent, ArticleLink, ArticleVisibility
from apps.tenancy.models import Tenant


def _articles_of_subject(
    *, tenant: Tenant, subject_id: str, memory_ids: Sequence[uuid.UUID]
) -> QuerySet[Article]:
    return Article.objects.filter(tenant=tenant).filter(
        Q(visibility=ArticleVisibility.OWNER, owner_agent_id=subject_id)
        | Q(source_memory_id__in=list(memory_ids))
    )


def _subject_kinds(
    *, tenant: Tenant, subject_id: str, memory_ids: Sequence[uuid.UUID]
) -> dict[str, QuerySet[Any]]:
    # Fixed before anything is deleted: the links and events go by these articles' ids.
    article_ids = list(
        _articles_of_subject(
            tenant=tenant, subject_id=subject_id, memory_ids=memory_ids
        ).values_list("pk", flat=True)
    )
    return {
        "article_access_events": ArticleAccessEvent.objects.filter(tenant=tenant).filter(
            Q(subject_id=subject_id) | Q(article_id__in=article_ids)
        ),
        "article_links": ArticleLink.objects.filter(tenant=tenant).filter(
            Q(from_article_id__in=article_ids) | Q(to_article_id__in=article_ids)
        ),
        "articles": Article.objects.filter(tenant=tenant, pk__in=article_ids),
    }


def _tenant_kinds(*, tenant: Tenant) -> dict[str, QuerySet[Any]]:
    return {
        "article_access_events": ArticleAccessEvent.objects.filter(tenant=tenant),
        "article_links": ArticleLink.objects.filter(tenant=tenant),
        "articles": Article.objects.filter(tenant=tenant),
    }


def knowledge_erase(
    *, tenant: Tenant, subject_id: str | None, memory_ids: Sequence[uuid.UUID], dry_run: bool
) -> dict[str, int]:
    """Delete (or count) the wiki's share of one subject, whose memories are ``memory_ids``,
    or of the whole tenant (``subject_id=None``)."""
    if subject_id is None:
        kinds = _tenant_kinds(tenant=tenant)
    else:
        kinds = _subject_kinds(tenant=tenant, subject_id=subject_id, memory_ids=memory_ids)
    return erase_kinds(kinds, dry_run=dry_run)
