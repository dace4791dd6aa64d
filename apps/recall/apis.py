"""HTTP API for merged recall under /api/v1/recall."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import (
    CheckedDictField,
    CheckedInputSerializer,
    CheckedListField,
    LimitField,
    ProjectIdField,
    QueryTextField,
    SessionIdField,
    TimestampField,
)
from apps.core.api.serializers import COMMON_ERRORS, ErrorSerializer, TimeWindowSerializer
from apps.core.db.filters import FILTER_HELP, record_filter_parse
from apps.knowledge.selectors import validate_knowledge_query, validate_session_id
from apps.knowledge.services import parse_article_ids
from apps.memory.selectors import VALIDITIES
from apps.recall.selectors import recall_context
from apps.recall.services import parse_recall_id, recall_context_record, recall_referenced
from apps.tenancy.api_base import ReadByMeaningApi, TenantApi, idempotent


class RecallInputSerializer(CheckedInputSerializer):
    # query and session_id are checked by the knowledge search's own validators (one
    # contract for every surface): invalid_query, query_too_long, invalid_session_id.
    query = QueryTextField(
        check=validate_knowledge_query, max_chars=settings.KNOWLEDGE_QUERY_MAX_CHARS
    )
    project_id = ProjectIdField()
    limit = LimitField(default=settings.RECALL_DEFAULT_LIMIT, max_value=settings.RECALL_MAX_LIMIT)
    session_id = SessionIdField(
        check=validate_session_id,
        help_text="Optional opaque token (≤ 200 bytes UTF-8) for the knowledge half: articles "
        "already shown to this session are demoted.",
    )
    as_of = TimestampField(
        required=False,
        help_text="ISO 8601: the memory half recalls the memories that held at this time "
        "(valid time); knowledge is searched as it is now.",
    )
    memory_filter = CheckedDictField(
        check=record_filter_parse,
        required=False,
        allow_null=True,
        help_text=f"Narrows the memory half only; knowledge is not filtered. {FILTER_HELP}",
    )


class MergedRecallItemSerializer(serializers.Serializer[Any]):
    source = serializers.ChoiceField(  # type: ignore[assignment] # shadows Field.source
        choices=["memory", "knowledge"]
    )
    id = serializers.UUIDField()
    rank = serializers.IntegerField(help_text="1-based position in the merged list.")
    score = serializers.FloatField(
        allow_null=True,
        help_text="Orders the merged list. Memory items: the memory recall's score (by default "
        "a fused reciprocal rank, not a relevance); knowledge items: the knowledge search's.",
    )
    similarity = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="memory items: cosine similarity to the query (null without a vector or "
        "on the fallback path); the value to threshold on.",
    )
    selection_reason = serializers.CharField()
    tokens_estimate = serializers.IntegerField(help_text="bytes/4 of the pasteable text.")
    text = serializers.CharField(required=False, help_text="memory items")
    embedding_status = serializers.ChoiceField(
        choices=["ready", "pending"],
        required=False,
        help_text="memory items: `pending` until the memory's embedding lands (found by its "
        "words only until then; selection_reason `keyword_pending`).",
    )
    validity = serializers.ChoiceField(
        choices=VALIDITIES,
        required=False,
        help_text="memory items: `current`, `superseded` (replaced by `superseded_by`) or "
        "`contested` (`conflicts_with` states another value).",
    )
    valid_from = TimestampField(required=False, help_text="memory items: when it became true.")
    valid_to = TimestampField(
        required=False, allow_null=True, help_text="memory items: when it stopped being true."
    )
    superseded_by = serializers.UUIDField(
        required=False, allow_null=True, help_text="memory items: the memory that replaced it."
    )
    supersedes = serializers.ListField(
        child=serializers.UUIDField(), required=False, help_text="memory items: what it replaced."
    )
    supersede_reason = serializers.CharField(
        required=False, help_text="memory items: why it replaced them (see MemoryOutput)."
    )
    conflicts_with = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        help_text="memory items: live memories stating another value, undecided.",
    )
    title = serializers.CharField(required=False, help_text="knowledge items")
    snippet = serializers.CharField(required=False, help_text="knowledge items")
    category = serializers.CharField(required=False, help_text="knowledge items")
    tags = serializers.ListField(child=serializers.CharField())


class CandidatesConsideredSerializer(serializers.Serializer[Any]):
    memory = serializers.IntegerField()
    knowledge = serializers.IntegerField()
    total = serializers.IntegerField()


class MergedRecallMetaSerializer(serializers.Serializer[Any]):
    recall_id = serializers.UUIDField()
    results_ranking = serializers.CharField()
    answer_confidence = serializers.ChoiceField(choices=["answer", "weak", "none"])
    provenance = serializers.CharField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True)
    degraded = serializers.BooleanField()
    degraded_reason = serializers.CharField(allow_null=True)
    candidates_considered = CandidatesConsideredSerializer()
    selected_count = serializers.IntegerField()
    tokens_selected = serializers.IntegerField()
    tokens_candidates = serializers.IntegerField()
    tokens_saved_vs_candidates = serializers.IntegerField()
    memory_count = serializers.IntegerField()
    knowledge_count = serializers.IntegerField()
    diversity = serializers.DictField(allow_null=True)
    as_of = TimestampField(allow_null=True, help_text="The memory half's `as_of`, or null.")
    time_window = TimeWindowSerializer(
        allow_null=True,
        help_text="The memory half's time window (its `meta.time_window`): knowledge articles "
        "have no valid time and are searched as they are now.",
    )


class MergedRecallOutputSerializer(serializers.Serializer[Any]):
    data: Any = MergedRecallItemSerializer(many=True)
    memory = serializers.DictField(help_text="The memory half's own envelope, untouched.")
    knowledge = serializers.DictField(help_text="The knowledge half's own envelope, untouched.")
    meta = MergedRecallMetaSerializer()


class RecallApi(ReadByMeaningApi):
    @extend_schema(
        operation_id="recall_context",
        request=RecallInputSerializer,
        responses={200: MergedRecallOutputSerializer, **COMMON_ERRORS},
        tags=["recall"],
    )
    def post(self, request: Request) -> Response:
        """Memory ∪ knowledge for one query, merged and explained.

        `data` is sorted by score DESC, then knowledge before memory, then id ASC, so an
        unchanged corpus renders a byte-identical `data` array (cache that, not the envelope:
        `meta.recall_id` is minted per call). Hand `meta.recall_id` back to
        `/recall/{recall_id}/referenced` for the articles you used.
        """
        payload = RecallInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = payload.validated_data
        merged = recall_context(
            scope=self.scope,
            query=args["query"],
            project_id=args.get("project_id"),
            limit=args["limit"],
            session_id=args.get("session_id"),
            as_of=args.get("as_of"),
            memory_filter=args.get("memory_filter"),
        )
        recall_context_record(scope=self.scope, merged=merged)
        return Response(
            {
                "data": merged.data,
                "memory": merged.memory,
                "knowledge": merged.knowledge,
                "meta": merged.meta,
            }
        )


class RecallReferencedInputSerializer(CheckedInputSerializer):
    # Checked by the service's own parser: invalid_article_ids / too_many_article_ids (the
    # count before the ids); not_surfaced is the service's.
    article_ids = CheckedListField(
        check=parse_article_ids,
        child=serializers.UUIDField(),
        min_length=1,
        max_length=settings.KNOWLEDGE_REFERENCED_MAX_IDS,
    )


class RecallReferencedDataSerializer(serializers.Serializer[Any]):
    recall_id = serializers.UUIDField()
    recorded = serializers.IntegerField()


class RecallReferencedOutputSerializer(serializers.Serializer[Any]):
    data: Any = RecallReferencedDataSerializer()
    meta = serializers.DictField()


class RecallReferencedApi(TenantApi):
    halted_methods = frozenset()  # records a client assertion about a read, not agent memory

    @extend_schema(
        operation_id="recall_referenced",
        request=RecallReferencedInputSerializer,
        parameters=[OpenApiParameter("recall_id", str, OpenApiParameter.PATH)],
        responses={201: RecallReferencedOutputSerializer, **COMMON_ERRORS, 404: ErrorSerializer},
        tags=["recall"],
    )
    @idempotent
    def post(self, request: Request, recall_id: str) -> Response:
        """Record which surfaced articles the caller actually used (at most 50, all or
        nothing). Any id recall did not surface under this `recall_id` in your tenant — a
        memory id, an unknown or foreign recall id — is 422 `not_surfaced` and nothing is
        written. Repeats cannot move the metrics (distinct pairs are counted)."""
        parse_recall_id(recall_id)  # the path before the body: 422 invalid_recall_id first
        payload = RecallReferencedInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        recorded = recall_referenced(
            scope=self.scope,
            recall_id=recall_id,
            article_ids=payload.validated_data["article_ids"],
        )
        return Response(
            {"data": {"recall_id": recall_id, "recorded": recorded}, "meta": {}},
            status=status.HTTP_201_CREATED,
        )
