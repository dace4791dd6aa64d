"""Opening an article: the deep read of one article, recorded as an ``opened`` event."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from apps.knowledge.models import Article
from apps.knowledge.selectors import LinkView, article_get, article_links
from apps.knowledge.services.access import record_opened
from apps.knowledge.viewer import Viewer
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class OpenedArticle:
    article: Article
    links: list[LinkView]


def article_open(
    *,
    tenant: Tenant,
    viewer: Viewer,
    api_key_id: uuid.UUID | None,
    article_id: uuid.UUID,
    search_id: uuid.UUID | None = None,
) -> OpenedArticle:
    """The article with its body and visible links, recorded as ``opened`` by this viewer.

    ``search_id`` attributes the open to the search that surfaced it, when the client says
    so; it must be the viewer's own search that surfaced this article, else 422
    ``not_surfaced`` (see ``record_opened``). Invisible, foreign and missing articles are the
    same 404. Neither error records anything.
    """
    article = article_get(tenant=tenant, viewer=viewer, article_id=article_id)
    record_opened(
        tenant=tenant,
        viewer=viewer,
        api_key_id=api_key_id,
        article_id=article.pk,
        search_id=search_id,
    )
    links = article_links(tenant=tenant, viewer=viewer, article_ids=[article.pk])
    return OpenedArticle(article=article, links=links)
