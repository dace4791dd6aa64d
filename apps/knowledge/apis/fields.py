"""Choice fields with their own, explicitly named OpenAPI enum components.

drf-spectacular names enums after the field (``status``, ``source``, ``kind``); several apps
use those names for different choice sets, which makes the generator warn (and fail under
``--fail-on-warn``). Each field here publishes its enum as a named component instead, via
the extension in :mod:`apps.knowledge.apis.schema`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework import serializers

from apps.knowledge.models import (
    ArticleCategory,
    ArticleSource,
    ArticleStatus,
    ArticleVisibility,
    LinkKind,
)


class KnowledgeChoiceField(serializers.ChoiceField):
    enum_name: ClassVar[str]
    enum_values: ClassVar[list[str]]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=self.enum_values, **kwargs)


class ArticleCategoryField(KnowledgeChoiceField):
    enum_name = "KnowledgeArticleCategoryEnum"
    enum_values = list(ArticleCategory.values)


class ArticleStatusField(KnowledgeChoiceField):
    enum_name = "KnowledgeArticleStatusEnum"
    enum_values = list(ArticleStatus.values)


class ArticleVisibilityField(KnowledgeChoiceField):
    enum_name = "KnowledgeArticleVisibilityEnum"
    enum_values = list(ArticleVisibility.values)


class ArticleSourceField(KnowledgeChoiceField):
    enum_name = "KnowledgeArticleSourceEnum"
    enum_values = list(ArticleSource.values)


class LinkKindField(KnowledgeChoiceField):
    enum_name = "KnowledgeLinkKindEnum"
    enum_values = list(LinkKind.values)


class LinkDirectionField(KnowledgeChoiceField):
    enum_name = "KnowledgeLinkDirectionEnum"
    enum_values = ["out", "in"]


class ProposalVerdictField(KnowledgeChoiceField):
    enum_name = "KnowledgeProposalVerdictEnum"
    enum_values = ["created", "gated_to_draft", "duplicate", "deduplicated"]


class SelectionReasonField(KnowledgeChoiceField):
    enum_name = "KnowledgeSelectionReasonEnum"
    enum_values = ["keyword", "semantic", "keyword+semantic", "keyword_fallback", "unscored"]


class ProvenanceField(KnowledgeChoiceField):
    enum_name = "KnowledgeProvenanceEnum"
    enum_values = ["curated", "retrieved"]


class AnswerConfidenceField(KnowledgeChoiceField):
    enum_name = "KnowledgeAnswerConfidenceEnum"
    enum_values = ["answer", "weak", "none"]


class MetricsWindowField(KnowledgeChoiceField):
    enum_name = "KnowledgeMetricsWindowEnum"
    enum_values = ["24h", "7d", "30d"]
