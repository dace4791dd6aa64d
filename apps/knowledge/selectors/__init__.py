"""Reads on the knowledge wiki. Import from here; the submodules hold the implementations."""

from apps.knowledge.selectors.articles import (
    DerivedArticle,
    LinkView,
    article_get,
    article_links,
    article_list,
    articles_derived_from_memory,
    visible_article_ids,
)
from apps.knowledge.selectors.confidence import (
    MAX_SEPARATION,
    AnswerConfidence,
    answer_confidence,
    score_separation,
)
from apps.knowledge.selectors.context import KnowledgeContext, knowledge_context
from apps.knowledge.selectors.metrics import (
    ArticleQuotaCounts,
    RetrievalMetrics,
    article_author_counts,
    article_quota_counts,
    article_status_counts,
    knowledge_retrieval_metrics,
)
from apps.knowledge.selectors.retrieval import (
    Legs,
    fuse,
    keyword_leg,
    semantic_leg,
    visible_articles,
)
from apps.knowledge.selectors.search import (
    MODE_REDUCE,
    MODE_REORDER,
    SearchHit,
    SearchResult,
    knowledge_search,
    snippet_for,
    validate_knowledge_query,
    validate_session_id,
)
from apps.knowledge.selectors.transfer import (
    article_ids_in_tenant,
    knowledge_export_records,
    knowledge_snapshot,
)

__all__ = [
    "MAX_SEPARATION",
    "MODE_REDUCE",
    "MODE_REORDER",
    "AnswerConfidence",
    "ArticleQuotaCounts",
    "DerivedArticle",
    "KnowledgeContext",
    "Legs",
    "LinkView",
    "RetrievalMetrics",
    "SearchHit",
    "SearchResult",
    "answer_confidence",
    "article_author_counts",
    "article_get",
    "article_ids_in_tenant",
    "article_links",
    "article_list",
    "article_quota_counts",
    "article_status_counts",
    "articles_derived_from_memory",
    "fuse",
    "keyword_leg",
    "knowledge_context",
    "knowledge_export_records",
    "knowledge_retrieval_metrics",
    "knowledge_search",
    "knowledge_snapshot",
    "score_separation",
    "semantic_leg",
    "snippet_for",
    "validate_knowledge_query",
    "validate_session_id",
    "visible_article_ids",
    "visible_articles",
]
