"""Writes on the knowledge wiki. Import from here; the submodules hold the implementations."""

from apps.knowledge.services.access import record_opened, record_referenced, record_surfaced
from apps.knowledge.services.articles import (
    UNSET,
    ArticleChanges,
    Proposal,
    Verdict,
    article_archive,
    article_create,
    article_publish,
    article_update,
    articles_delete_for_memories,
)
from apps.knowledge.services.embedding import (
    ArticleEmbeddingRun,
    article_backfill_embeddings,
    article_embed_pending,
)
from apps.knowledge.services.erasure import knowledge_erase
from apps.knowledge.services.gate import propose_article
from apps.knowledge.services.links import article_link_create
from apps.knowledge.services.opening import OpenedArticle, article_open

__all__ = [
    "UNSET",
    "ArticleChanges",
    "ArticleEmbeddingRun",
    "OpenedArticle",
    "Proposal",
    "Verdict",
    "article_archive",
    "article_backfill_embeddings",
    "article_create",
    "article_embed_pending",
    "article_link_create",
    "article_open",
    "article_publish",
    "article_update",
    "articles_delete_for_memories",
    "knowledge_erase",
    "propose_article",
    "record_opened",
    "record_referenced",
    "record_surfaced",
]
