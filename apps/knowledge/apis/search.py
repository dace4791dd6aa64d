"""HTTP API for reading the wiki by meaning: search, the deep-read context, and metrics."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.core.api.fields import (
    CheckedInputSerializer,
    InputSerializer,
    LimitField,
    QueryTextField,
    SessionIdField,
)
from apps.core.api.serializers import COMMON_ERRORS, render_many
from apps.knowledge.apis.articles import (
    CURATOR_ROLES,
    TAGS,
    ArticleLinkOutputSerializer,
    ArticleOutputSerializer,
)
from apps.knowledge.apis.fields import (
    AnswerConfidenceField,
    ArticleCategoryField,
    MetricsWindowField,
    ProvenanceField,
    SelectionReasonField,
)
from apps.knowledge.selectors import (
    SearchHit,
    knowledge_context,
    knowledge_retrieval_metrics,
    knowledge_search,
    validate_knowledge_query,
    validate_session_id,
)
from apps.knowledge.services import knowledge_search_record
from apps.knowledge.viewer import Viewer
from apps.tenancy.api_base import RECALL, ReadByMeaningApi, TenantApi

# ----------------------------------------------------------------------------- /search


class KnowledgeSearchInputSerializer(CheckedInputSerializer):
    # query and session_id are checked by the selector's own validators, so every surface
    # (this endpoint, merged recall) shares one contract: invalid_query, query_too_long,
    # invalid_session_id.
    query = QueryTextField(
        check=validate_knowledge_query,
        max_chars=settings.KNOWLEDGE_QUERY_MAX_CHARS,
        help_text=f"1-{settings.KNOWLEDGE_QUERY_MAX_CHARS} characters, not blank; websearch "
        "syntax is honoured.",
    )
    limit = LimitField(
        default=settings.KNOWLEDGE_SEARCH_DEFAULT_LIMIT,
        max_value=settings.KNOWLEDGE_SEARCH_MAX_LIMIT,
    )
    offset = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=settings.KNOWLEDGE_DIVERSITY_MAX_POOL
    )
    project_id = serializers.UUIDField(required=False, allow_null=True, default=None)
    session_id = SessionIdField(
        check=validate_session_id,
        default=None,
        help_text="Optional opaque token (≤ 200 bytes UTF-8): articles already shown to this "
        "session are demoted in favour of unseen ones.",
    )


class KnowledgeSearchHitOutputSerializer(serializers.Serializer[SearchHit]):
    id = serializers.UUIDField(source="article.pk")
    title = serializers.CharField(source="article.title")
    category = ArticleCategoryField(source="article.category")
    tags = serializers.ListField(child=serializers.CharField(), source="article.tags")
    score = serializers.FloatField(
        allow_null=True, help_text="Reciprocal-rank fusion, normalised: 1.0 = first in both legs."
    )
    snippet = serializers.CharField()
    selection_reason = SelectionReasonField()
    rank = serializers.IntegerField()


class KnowledgeDiversityMetaSerializer(serializers.Serializer[dict[str, Any]]):
    enabled = serializers.BooleanField()
    candidates = serializers.IntegerField()
    selected = serializers.IntegerField()
    vectors_available = serializers.IntegerField()
    dropped_near_duplicates = serializers.IntegerField()
    dropped_exact_duplicates = serializers.IntegerField()
    dropped_already_seen = serializers.IntegerField()
    readmitted_already_seen = serializers.IntegerField()
    near_dup_threshold = serializers.FloatField()

    @override
    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        # `lambda` is a Python keyword, so it cannot be declared as an attribute.
        fields["lambda"] = serializers.FloatField()
        return fields


class KnowledgeSearchMetaSerializer(serializers.Serializer[dict[str, Any]]):
    search_id = serializers.UUIDField(help_text="Stamped on the surfaced access events.")
    total_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    mode = serializers.CharField()
    pool = serializers.IntegerField(help_text="Ranked candidates considered.")
    degraded = serializers.BooleanField()
    degraded_reason = serializers.CharField(allow_null=True)
    provenance = ProvenanceField()
    confidence = serializers.FloatField()
    answer_confidence = AnswerConfidenceField()
    answer_separation = serializers.FloatField(allow_null=True)
    keyword_mode = serializers.CharField()
    ann_iterative_scan = serializers.CharField(
        required=False,
        help_text="`off` (exact scan), `applied` (HNSW with pgvector's iterative scan) or "
        "`unavailable` (HNSW without it: the server's pgvector lacks it); vector reads only.",
    )
    ann_iterative_scan_reason = serializers.CharField(
        required=False, help_text="Why the iterative scan was `unavailable`; only then."
    )
    diversity = KnowledgeDiversityMetaSerializer()


class KnowledgeSearchOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = KnowledgeSearchHitOutputSerializer(many=True)
    meta = KnowledgeSearchMetaSerializer()


class KnowledgeSearchApi(ReadByMeaningApi):
    @extend_schema(
        operation_id="knowledge_search",
        request=KnowledgeSearchInputSerializer,
        responses={200: KnowledgeSearchOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        """Hybrid search: full text and vector kNN fused by reciprocal rank, diversified.

        Each result says why it was chosen (`selection_reason`: keyword, semantic,
        keyword+semantic, keyword_fallback, unscored). Embeddings down → keyword only with
        `meta.degraded: true`. `meta.provenance` is `curated` when an article's title or
        alias matches the query (it is then first); `meta.answer_confidence` says whether
        the results are answers (answer | weak | none) from how far the best result stands
        out from the rest of this query's own pool. Results are recorded as surfaced under
        `meta.search_id`.
        """
        payload = KnowledgeSearchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = payload.validated_data
        viewer = Viewer.from_scope(self.scope)
        result = knowledge_search(
            tenant=self.scope.tenant,
            viewer=viewer,
            query=args["query"],
            limit=args["limit"],
            offset=args["offset"],
            project_id=args["project_id"],
            session_id=args["session_id"],
        )
        knowledge_search_record(
            tenant=self.scope.tenant, viewer=viewer, api_key_id=self.scope.api_key.pk, result=result
        )
        return Response(
            {
                "data": render_many(KnowledgeSearchHitOutputSerializer, result.results),
                "meta": result.meta,
            }
        )


# ----------------------------------------------------------------------------- /context


class KnowledgeContextInputSerializer(CheckedInputSerializer):
    # The search's query contract (invalid_query, query_too_long), as on POST /search.
    query = QueryTextField(
        check=validate_knowledge_query,
        max_chars=settings.KNOWLEDGE_QUERY_MAX_CHARS,
        help_text=f"1-{settings.KNOWLEDGE_QUERY_MAX_CHARS} characters, not blank; websearch "
        "syntax is honoured.",
    )
    limit = LimitField(
        default=settings.KNOWLEDGE_CONTEXT_DEFAULT_LIMIT,
        max_value=settings.KNOWLEDGE_CONTEXT_MAX_LIMIT,
    )
    project_id = serializers.UUIDField(required=False, allow_null=True, default=None)


class KnowledgeContextFilterSerializer(InputSerializer):
    query = serializers.CharField(
        required=False, default="", allow_blank=True, trim_whitespace=False
    )
    limit = LimitField(
        default=settings.KNOWLEDGE_CONTEXT_DEFAULT_LIMIT,
        max_value=settings.KNOWLEDGE_CONTEXT_MAX_LIMIT,
    )
    project_id = serializers.UUIDField(required=False, default=None)


class KnowledgeContextArticleOutputSerializer(ArticleOutputSerializer):
    score = serializers.FloatField(allow_null=True)
    selection_reason = SelectionReasonField()
    links = ArticleLinkOutputSerializer(many=True)


class KnowledgeContextDataSerializer(serializers.Serializer[dict[str, Any]]):
    results = KnowledgeContextArticleOutputSerializer(many=True)
    linked = ArticleOutputSerializer(many=True)


class KnowledgeContextOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = KnowledgeContextDataSerializer()
    meta = serializers.DictField(help_text="The search meta, plus `linked_count`.")


class KnowledgeContextApi(ReadByMeaningApi):
    # Both methods are the same read, in the same bucket; the GET stays for existing callers.
    rate_limits = {"GET": RECALL, "POST": RECALL}

    @extend_schema(
        operation_id="knowledge_context",
        request=KnowledgeContextInputSerializer,
        responses={200: KnowledgeContextOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        """Deep read: the top results with full bodies, plus the articles they link to.

        Same query contract and meta as search; linked articles are followed one hop and
        only when visible to the caller. The query travels in the body, so it stays out of
        URLs and access logs.
        """
        payload = KnowledgeContextInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return self._serve(payload.validated_data)

    @extend_schema(
        operation_id="legacy_knowledge_context",
        parameters=[KnowledgeContextFilterSerializer],
        responses={200: KnowledgeContextOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
        deprecated=True,
    )
    def get(self, request: Request) -> Response:
        """Deprecated: use `POST /api/v1/knowledge/context`, which takes the same fields in
        its body. This form puts the query in the URL, where proxies and access logs keep it.

        Same answer and rate-limit bucket as the POST.
        """
        filters = KnowledgeContextFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return self._serve(filters.validated_data)

    def _serve(self, args: dict[str, Any]) -> Response:
        viewer = Viewer.from_scope(self.scope)
        context = knowledge_context(tenant=self.scope.tenant, viewer=viewer, **args)
        knowledge_search_record(
            tenant=self.scope.tenant,
            viewer=viewer,
            api_key_id=self.scope.api_key.pk,
            result=context.search,
        )
        articles = render_many(ArticleOutputSerializer, [hit.article for hit in context.results])
        results = [
            {
                **article,
                "score": hit.score,
                "selection_reason": hit.selection_reason,
                "links": render_many(ArticleLinkOutputSerializer, context.links[hit.article.pk]),
            }
            for article, hit in zip(articles, context.results, strict=True)
        ]
        data = {
            "results": results,
            "linked": render_many(ArticleOutputSerializer, context.linked),
        }
        return Response({"data": data, "meta": context.meta})


# ----------------------------------------------------------------------------- /metrics


class KnowledgeMetricsFilterSerializer(InputSerializer):
    window = MetricsWindowField(required=False, default="7d")


class KnowledgeMetricsDataSerializer(serializers.Serializer[dict[str, Any]]):
    window = MetricsWindowField()
    surfaced = serializers.IntegerField(help_text="Distinct (search_id, article_id) pairs.")
    opened = serializers.IntegerField()
    referenced = serializers.IntegerField()
    open_rate = serializers.FloatField()
    reference_rate = serializers.FloatField(help_text="referenced / surfaced.")


class KnowledgeMetricsOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = KnowledgeMetricsDataSerializer()
    meta = serializers.DictField()


class KnowledgeMetricsApi(TenantApi):
    allowed_roles = CURATOR_ROLES
    rate_limit_exempt = {"GET": "curator-only counts over one window of access events"}

    @extend_schema(
        operation_id="knowledge_metrics",
        parameters=[KnowledgeMetricsFilterSerializer],
        responses={200: KnowledgeMetricsOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        """Retrieval funnel for the tenant over `window` (24h | 7d | 30d).

        Each count is of DISTINCT (search_id, article_id) pairs, so repeats (a re-posted
        `referenced`, a re-opened article) never move it. User, orchestrator and
        superadmin keys only.
        """
        filters = KnowledgeMetricsFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        metrics = knowledge_retrieval_metrics(
            tenant=self.scope.tenant, window=filters.validated_data["window"]
        )
        data = {
            "window": metrics.window,
            "surfaced": metrics.surfaced,
            "opened": metrics.opened,
            "referenced": metrics.referenced,
            "open_rate": metrics.open_rate,
            "reference_rate": metrics.reference_rate,
        }
        return Response({"data": data, "meta": {}})
