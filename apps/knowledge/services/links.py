"""Typed links between articles (relates_to | supersedes | potential_conflict)."""

from __future__ import annotations

import uuid

from apps.core.db.transactions import write_transaction
from apps.knowledge.exceptions import ArticleNotFound, InvalidArticle, NotArticleOwner
from apps.knowledge.models import Article, ArticleLink, LinkKind
from apps.knowledge.services.articles import link_articles
from apps.knowledge.services.fields import clean_choice
from apps.knowledge.viewer import Viewer, can_edit, visible_q
from apps.tenancy.models import Tenant


def article_link_create(
    *,
    tenant: Tenant,
    viewer: Viewer,
    from_article_id: uuid.UUID,
    to_article_id: uuid.UUID,
    kind: str,
) -> ArticleLink:
    """Link two articles the viewer can see; idempotent for an existing (from, to, kind).

    The viewer must be allowed to edit the source article (agents: their own). An article
    the viewer cannot see is the same 404 as a missing one.
    """
    kind = clean_choice("kind", kind, LinkKind.values)
    if from_article_id == to_article_id:
        raise InvalidArticle("An article cannot link to itself.", details={"field": "to"})
    with write_transaction():
        articles = {
            article.pk: article
            for article in Article.objects.filter(
                tenant=tenant, pk__in=[from_article_id, to_article_id]
            )
            .filter(visible_q(viewer))
            .defer("embedding")
        }
        source, target = articles.get(from_article_id), articles.get(to_article_id)
        if source is None or target is None:
            raise ArticleNotFound("Article not found.")
        if not can_edit(viewer, owner_agent_id=source.owner_agent_id):
            raise NotArticleOwner("Agents may link only from the articles they own.")
        return link_articles(tenant=tenant, from_article=source, to_article=target, kind=kind)
