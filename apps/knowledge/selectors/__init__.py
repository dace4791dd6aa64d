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
from apps.knowledge.selectors.confidence import AnswerConfidence, answer_confidence
from apps.knowledge.selectors.context import KnowledgeContext, knowledge_context
from apps.knowledge.selectors.metrics import RetrievalMetrics, knowledge_retrieval_metrics
from apps.knowledge.selectors.search import (
    MODE_REDUCE,
    MODE_REORDER,
    SearchHit,
    SearchResult,
    knowledge_search,
    validate_knowledge_query,
    validate_session_id,
)

__all__ = [
    "MODE_REDUCE",
    "MODE_REORDER",
    "AnswerConfidence",
    "DerivedArticle",
    "KnowledgeContext",
    "LinkView",
    "RetrievalMetrics",
    "SearchHit",
    "SearchResult",
    "answer_confidence",
    "article_get",
    "article_links",
    "article_list",
    "articles_derived_from_memory",
    "knowledge_context",
    "knowledge_retrieval_metrics",
    "knowledge_search",
    "validate_knowledge_query",
    "validate_session_id",
    "visible_article_ids",
]
