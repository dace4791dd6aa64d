from django.urls import path

from apps.knowledge.apis import (
    ArticleDetailApi,
    ArticleListApi,
    ArticlePublishApi,
    KnowledgeContextApi,
    KnowledgeMetricsApi,
    KnowledgeSearchApi,
)

urlpatterns = [
    path("articles", ArticleListApi.as_view(), name="knowledge-articles"),
    path("articles/<uuid:article_id>", ArticleDetailApi.as_view(), name="knowledge-article"),
    path(
        "articles/<uuid:article_id>/publish",
        ArticlePublishApi.as_view(),
        name="knowledge-article-publish",
    ),
    path("search", KnowledgeSearchApi.as_view(), name="knowledge-search"),
    path("context", KnowledgeContextApi.as_view(), name="knowledge-context"),
    path("metrics", KnowledgeMetricsApi.as_view(), name="knowledge-metrics"),
]
