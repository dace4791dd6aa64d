"""Writes on the knowledge wiki. Import from here; the submodules hold the implementations."""

from apps.knowledge.services.access import (
    parse_article_ids,
    record_opened,
    record_referenced,
    record_surfaced,
)
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
    article_migrate_batch,
    article_reembed_batch,
    article_reembed_remaining,
)
from apps.knowledge.services.erasure import knowledge_erase
from apps.knowledge.services.fields import article_embedding_text
from apps.knowledge.services.gate import propose_article
from apps.knowledge.services.links import article_link_create
from apps.knowledge.services.locks import lock_tenant_article_counts
from apps.knowledge.services.opening import OpenedArticle, article_open
from apps.knowledge.services.search import knowledge_search_record
from apps.knowledge.services.transfer import ImportOutcome, knowledge_import, knowledge_restore

__all__ = [
    "UNSET",
    "ArticleChanges",
    "ArticleEmbeddingRun",
    "ImportOutcome",
    "OpenedArticle",
    "Proposal",
    "Verdict",
    "article_archive",
    "article_backfill_embeddings",
    "article_create",
    "article_embed_pending",
    "article_embedding_text",
    "article_link_create",
    "article_migrate_batch",
    "article_open",
    "article_publish",
    "article_reembed_batch",
    "article_reembed_remaining",
    "article_update",
    "articles_delete_for_memories",
    "knowledge_erase",
    "knowledge_import",
    "knowledge_restore",
    "knowledge_search_record",
    "lock_tenant_article_counts",
    "parse_article_ids",
    "propose_article",
    "record_opened",
    "record_referenced",
    "record_surfaced",
]
