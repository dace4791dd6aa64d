"""HTTP API of the knowledge wiki under /api/v1/knowledge/ (one class per resource URL)."""

from apps.knowledge.apis.articles import (
    ArticleDetailApi,
    ArticleListApi,
    ArticlePublishApi,
)
from apps.knowledge.apis.search import (
    KnowledgeContextApi,
    KnowledgeMetricsApi,
    KnowledgeSearchApi,
)

__all__ = [
    "ArticleDetailApi",
    "ArticleListApi",
    "ArticlePublishApi",
    "KnowledgeContextApi",
    "KnowledgeMetricsApi",
    "KnowledgeSearchApi",
]
