"""HTTP API for agent memory under /api/v1/memory (thin: validate → one service → render)."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.core.api.serializers import COMMON_ERRORS, ErrorSerializer, render_many
from apps.core.rate_limits import enforce_rate_limit
from apps.memory.models import (
    SESSION_ID_MAX_LENGTH,
    Memory,
    MemorySource,
    SessionRole,
)
from apps.memory.selectors import (
    RECALL_MODES,
    RECALL_SELECTION_REASONS,
    memory_list,
    memory_list_all_subjects,
    memory_recall,
    session_history,
)
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_create_many,
    memory_forget,
    memory_forget_any,
    memory_supersede,
    session_append_many,
)
from apps.memory.services.graduation import memory_graduate
from apps.memory.services.promotion import promotion_request
from apps.tenancy.api_base import TenantApi, idempotent
from apps.tenancy.scope import RequestScope

WRITE_ERRORS = {**COMMON_ERRORS, 404: ErrorSerializer, 409: ErrorSerializer, 423: ErrorSerializer}
WRITE_ERRORS[429] = ErrorSerializer


def _enforce_write_rate(scope: RequestScope) -> None:
    enforce_rate_limit(
        bucket=f"memory-write:{scope.api_key.pk}",
        limit=settings.MEMORY_WRITE_RATE_LIMIT,
        window_seconds=settings.MEMORY_WRITE_RATE_WINDOW_SECONDS,
    )


# ----------------------------------------------------------------------------- output


class MemoryOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    subject_id = serializers.CharField()
    text = serializers.CharField()
    # DRF moves declared fields off the class, so `context` does not clobber Field.context at
    # run time; the type checker only sees the name.
    context = serializers.CharField()  # type: ignore[assignment]
    tags = serializers.ListField(child=serializers.CharField())
    metadata = serializers.DictField()
    project_id = serializers.UUIDField(allow_null=True)
    # A field named `source` shadows Field.source for the type checker only.
    source = serializers.CharField()  # type: ignore[assignment]
    source_session_id = serializers.CharField()
    confidence = serializers.FloatField()
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)
    superseded_at = serializers.DateTimeField(allow_null=True)
    recall_count = serializers.IntegerField()
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    embedding_status = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_embedding_status(self, memory: Memory) -> str:
        # `embedded_at` is set in the same UPDATE as the vector, so it is a faithful proxy
        # that does not require loading the 384-float column.
        return "ready" if memory.embedded_at is not None else "pending"


class SessionTurnOutputSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    session_id = serializers.CharField()
    role = serializers.CharField()
    content = serializers.CharField()
    metadata = serializers.DictField()
    expires_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()


class ListMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class MemoryListOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = MemoryOutputSerializer(many=True)
    meta = ListMetaSerializer()


class MemoryWriteOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = serializers.DictField(help_text="The memory (long_term) or the turn (session).")
    meta = serializers.DictField()


class SessionHistoryOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionTurnOutputSerializer(many=True)
    meta = ListMetaSerializer()


# ----------------------------------------------------------------------------- input


class MemoryWriteInputSerializer(serializers.Serializer[dict[str, Any]]):
    """One write. ``tier`` picks the fields that apply; scope fields in a body are ignored."""

    tier = serializers.ChoiceField(choices=["long_term", "session"], default="long_term")
    # long_term
    text = serializers.CharField(required=False, trim_whitespace=False)
    context = serializers.CharField(  # type: ignore[assignment] # see MemoryOutputSerializer
        required=False,
        allow_blank=True,
        max_length=settings.MEMORY_CONTEXT_MAX_CHARS,
        help_text="Optional retrieval context (surrounding turns, a date): keyword-indexed "
        "beside the text, never returned as it.",
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=50
    )
    metadata = serializers.DictField(required=False)
    project_id = serializers.UUIDField(required=False, allow_null=True)
    confidence = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
    supersedes = serializers.UUIDField(required=False, allow_null=True)
    # session
    session_id = serializers.CharField(required=False, max_length=SESSION_ID_MAX_LENGTH)
    content = serializers.CharField(required=False, trim_whitespace=False)
    role = serializers.ChoiceField(choices=SessionRole.values, required=False)
    expires_at = serializers.DateTimeField(required=False)
    ttl_seconds = serializers.IntegerField(required=False, min_value=1)

    @override
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["tier"] == "long_term":
            text = attrs.get("text", "")
            if not text.strip():
                raise serializers.ValidationError({"text": ["text is required."]}, code="required")
            if len(text) > settings.MEMORY_TEXT_MAX_CHARS:
                raise serializers.ValidationError(
                    {"text": [f"At most {settings.MEMORY_TEXT_MAX_CHARS} characters."]},
                    code="text_too_long",
                )
        else:
            missing = [name for name in ("session_id", "content") if not attrs.get(name)]
            if missing:
                raise serializers.ValidationError(
                    {name: ["This field is required for tier=session."] for name in missing},
                    code="required",
                )
            if "expires_at" not in attrs and "ttl_seconds" not in attrs:
                raise serializers.ValidationError(
                    {"expires_at": ["expires_at or ttl_seconds is required."]},
                    code="expires_at_required",
                )
        return attrs


class MemoryBatchInputSerializer(serializers.Serializer[dict[str, Any]]):
    items = MemoryWriteInputSerializer(many=True, allow_empty=False)

    def validate_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if len(items) > settings.MEMORY_BATCH_MAX_ITEMS:
            raise serializers.ValidationError(
                f"At most {settings.MEMORY_BATCH_MAX_ITEMS} items.", code="batch_too_large"
            )
        if any(item.get("supersedes") for item in items):
            raise serializers.ValidationError(
                "supersedes is only accepted on single writes.", code="invalid"
            )
        return items


class MemoryListFilterSerializer(serializers.Serializer[dict[str, Any]]):
    project_id = serializers.UUIDField(required=False)
    source = serializers.ChoiceField(  # type: ignore[assignment] # shadows Field.source
        choices=MemorySource.values, required=False
    )
    include_superseded = serializers.BooleanField(required=False, default=False)
    all_subjects = serializers.BooleanField(required=False, default=False)
    limit = serializers.IntegerField(
        required=False, default=50, min_value=1, max_value=settings.MEMORY_LIST_MAX_LIMIT
    )
    offset = serializers.IntegerField(required=False, default=0, min_value=0)


def _long_term_draft(item: dict[str, Any]) -> MemoryDraft:
    return MemoryDraft(
        text=item["text"],
        context=item.get("context", ""),
        tags=item.get("tags", []),
        metadata=item.get("metadata", {}),
        project_id=item.get("project_id"),
        confidence=item.get("confidence", 1.0),
    )


def _session_draft(item: dict[str, Any]) -> SessionTurnDraft:
    return SessionTurnDraft(
        session_id=item["session_id"],
        content=item["content"],
        role=item.get("role", SessionRole.USER),
        metadata=item.get("metadata", {}),
        expires_at=item.get("expires_at"),
        ttl_seconds=item.get("ttl_seconds"),
    )


def _write_items(scope: RequestScope, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write a mixed batch: every item validated first, then each tier all-or-nothing."""
    long_term = [_long_term_draft(i) for i in items if i["tier"] == "long_term"]
    turns = [_session_draft(i) for i in items if i["tier"] == "session"]
    memories = memory_create_many(
        tenant=scope.tenant, subject_id=scope.subject_id, drafts=long_term
    )
    rows = session_append_many(tenant=scope.tenant, subject_id=scope.subject_id, drafts=turns)
    memory_iter = iter(render_many(MemoryOutputSerializer, memories))
    turn_iter = iter(render_many(SessionTurnOutputSerializer, rows))
    rendered: list[dict[str, Any]] = []
    for item in items:
        if item["tier"] == "long_term":
            rendered.append({"tier": "long_term", **next(memory_iter)})
        else:
            rendered.append({"tier": "session", **next(turn_iter)})
    return rendered


class MemoryListApi(TenantApi):
    @extend_schema(
        operation_id="memory_write",
        request=MemoryWriteInputSerializer,
        responses={201: MemoryWriteOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Write one long-term memory (embedded asynchronously) or one session turn.

        Long-term: `text` (≤ MEMORY_TEXT_MAX_CHARS), optional `tags`, `metadata`, `project_id`
        (validated against the tenant: 422 `invalid_project_id`) and `supersedes` (the id of
        the caller's live memory this one replaces). Session: `session_id`, `content`
        (≤ 100 KB), `role`, and `expires_at` or `ttl_seconds`. Over quota → 409
        `quota_exceeded`; over the write rate → 429 `rate_limited` with `Retry-After`.
        """
        payload = MemoryWriteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        _enforce_write_rate(self.scope)
        item = payload.validated_data
        if item["tier"] == "long_term" and item.get("supersedes"):
            memory = memory_supersede(
                tenant=self.scope.tenant,
                subject_id=self.scope.subject_id,
                memory_id=item["supersedes"],
                draft=_long_term_draft(item),
            )
            data = {"tier": "long_term", **MemoryOutputSerializer(memory).data}
        else:
            data = _write_items(self.scope, [item])[0]
        return Response({"data": data, "meta": {}}, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="memory_list",
        parameters=[MemoryListFilterSerializer],
        responses={200: MemoryListOutputSerializer, **COMMON_ERRORS},
        tags=["memory"],
    )
    def get(self, request: Request) -> Response:
        """List the caller's long-term memories, newest first.

        `all_subjects=true` lists every subject of the tenant, for a superadmin impersonating
        it (`X-Impersonate-Tenant`); for any other key the flag is ignored.
        """
        filters = MemoryListFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        args = dict(filters.validated_data)
        all_subjects = args.pop("all_subjects")
        if all_subjects and self.scope.is_superadmin:
            page = memory_list_all_subjects(tenant=self.scope.tenant, **args)
        else:
            page = memory_list(tenant=self.scope.tenant, subject_id=self.scope.subject_id, **args)
        return Response(
            {"data": MemoryOutputSerializer(page.results, many=True).data, "meta": page.meta}
        )


class MemoryBatchOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = serializers.ListField(child=serializers.DictField())
    meta = serializers.DictField()


class MemoryBatchApi(TenantApi):
    @extend_schema(
        operation_id="memory_write_batch",
        request=MemoryBatchInputSerializer,
        responses={201: MemoryBatchOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Write up to 500 items all-or-nothing: one invalid item or a quota overflow writes
        nothing."""
        payload = MemoryBatchInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        _enforce_write_rate(self.scope)
        data = _write_items(self.scope, payload.validated_data["items"])
        return Response(
            {"data": data, "meta": {"written": len(data)}}, status=status.HTTP_201_CREATED
        )


class MemoryDetailApi(TenantApi):
    @extend_schema(
        operation_id="memory_forget",
        responses={204: None, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def delete(self, request: Request, memory_id: uuid.UUID) -> Response:
        """Forget one of the caller's memories (and the older versions it superseded).

        A superadmin impersonating a tenant may forget any subject's memory. Another
        subject's or tenant's id is the same 404 as a missing one.
        """
        if self.scope.is_superadmin:
            memory_forget_any(tenant=self.scope.tenant, memory_id=memory_id)
        else:
            memory_forget(
                tenant=self.scope.tenant, subject_id=self.scope.subject_id, memory_id=memory_id
            )
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryRecallInputSerializer(serializers.Serializer[dict[str, Any]]):
    # The query itself is validated by the selector so every surface shares one contract
    # (`invalid_query`, `query_too_long`).
    query = serializers.JSONField()
    project_id = serializers.UUIDField(required=False, allow_null=True)
    limit = serializers.IntegerField(
        required=False,
        default=settings.MEMORY_RECALL_DEFAULT_LIMIT,
        min_value=1,
        max_value=settings.MEMORY_RECALL_MAX_LIMIT,
    )
    include_superseded = serializers.BooleanField(required=False, default=False)
    # Default: MEMORY_RECALL_DEFAULT_MODE (hybrid). docs/memory.md, "Recall modes".
    mode = serializers.ChoiceField(choices=RECALL_MODES, required=False)


class RecallHitOutputSerializer(serializers.Serializer[dict[str, Any]]):
    memory = MemoryOutputSerializer()
    score = serializers.FloatField(allow_null=True)
    selection_reason = serializers.ChoiceField(choices=RECALL_SELECTION_REASONS)


class MemoryRecallMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    fallback = serializers.BooleanField()
    reason = serializers.CharField(allow_null=True)
    underfilled = serializers.BooleanField()
    strategy = serializers.CharField()
    ann_iterative_scan = serializers.CharField(required=False)
    mode = serializers.ChoiceField(choices=RECALL_MODES)


class MemoryRecallOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = RecallHitOutputSerializer(many=True)
    meta = MemoryRecallMetaSerializer()


class MemoryRecallApi(TenantApi):
    halted_methods = frozenset()  # recall is a read, even though it is a POST

    @extend_schema(
        operation_id="memory_recall",
        request=MemoryRecallInputSerializer,
        responses={200: MemoryRecallOutputSerializer, **COMMON_ERRORS},
        tags=["memory"],
    )
    def post(self, request: Request) -> Response:
        """Recall the caller's memories by meaning and words (global ∪ `project_id`).

        `mode`: `semantic` (vector ranking), `keyword` (BM25 over text and context) or
        `hybrid` (both, fused by weighted reciprocal rank; the default). `meta.fallback` is
        true (with a stable `meta.reason`, and `score: null`) when embeddings are unavailable
        and the keyword ranking answered instead; an empty scope on the healthy path is `[]`
        with `fallback: false`. `meta.strategy` says how the vector leg ran (exact | ann |
        ann+exact), or keyword | fallback; each result's `selection_reason` says which
        ranking picked it (semantic | keyword | keyword+semantic | keyword_fallback |
        ilike_fallback).
        """
        payload = MemoryRecallInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = payload.validated_data
        result = memory_recall(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            query=args["query"],
            project_id=args.get("project_id"),
            limit=args["limit"],
            include_superseded=args["include_superseded"],
            mode=args.get("mode"),
        )
        memories = render_many(MemoryOutputSerializer, [hit.memory for hit in result.results])
        data = [
            {"memory": memory, "score": hit.score, "selection_reason": hit.selection_reason}
            for memory, hit in zip(memories, result.results, strict=True)
        ]
        return Response({"data": data, "meta": result.meta})


class SessionHistoryFilterSerializer(serializers.Serializer[dict[str, Any]]):
    limit = serializers.IntegerField(required=False, default=200, min_value=1, max_value=1000)
    offset = serializers.IntegerField(required=False, default=0, min_value=0)


class SessionHistoryApi(TenantApi):
    @extend_schema(
        operation_id="memory_session_history",
        parameters=[
            SessionHistoryFilterSerializer,
            OpenApiParameter("session_id", str, OpenApiParameter.PATH),
        ],
        responses={200: SessionHistoryOutputSerializer, **COMMON_ERRORS},
        tags=["memory"],
    )
    def get(self, request: Request, session_id: str) -> Response:
        """The caller's own turns of one session, in the order they were appended."""
        filters = SessionHistoryFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = session_history(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            session_id=session_id,
            **filters.validated_data,
        )
        return Response(
            {"data": SessionTurnOutputSerializer(page.results, many=True).data, "meta": page.meta}
        )


class MemoryPromoteInputSerializer(serializers.Serializer[dict[str, Any]]):
    # Validated by the service so the API, MCP and the stop hook share one contract.
    session_id = serializers.JSONField()


class MemoryPromoteDataSerializer(serializers.Serializer[Any]):
    session_id = serializers.CharField()
    enqueued = serializers.BooleanField()
    reason = serializers.ChoiceField(
        choices=["enqueued", "already_queued", "unchanged", "too_few_turns"]
    )
    job_id = serializers.UUIDField(allow_null=True)


class MemoryPromoteOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = MemoryPromoteDataSerializer()
    meta = serializers.DictField()


class MemoryPromoteApi(TenantApi):
    @extend_schema(
        operation_id="memory_promote",
        request=MemoryPromoteInputSerializer,
        responses={202: MemoryPromoteOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Compile one of the caller's sessions into long-term memories, in the background.

        202 says what was enqueued (or why nothing was: `unchanged` since the last promotion,
        `too_few_turns`, `already_queued`). Over the tenant's hourly budget → 429
        `budget_exceeded` with `Retry-After`, and no LLM call is made.
        """
        payload = MemoryPromoteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        result = promotion_request(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            session_id=payload.validated_data["session_id"],
        )
        data = {
            "session_id": result.session_id,
            "enqueued": result.enqueued,
            "reason": result.reason,
            "job_id": result.job_id,
        }
        return Response(
            {"data": MemoryPromoteDataSerializer(data).data, "meta": {}},
            status=status.HTTP_202_ACCEPTED,
        )


class MemoryGraduateInputSerializer(serializers.Serializer[dict[str, Any]]):
    # memory_id and re_scope are validated by the service (invalid_memory_id, invalid_re_scope).
    memory_id = serializers.JSONField()
    re_scope = serializers.JSONField(required=False, allow_null=True)


class GraduatedArticleSerializer(serializers.Serializer[Any]):
    """A body-less article summary; fetch the body from /api/v1/knowledge/articles/{id}."""

    id = serializers.UUIDField()
    title = serializers.CharField()
    category = serializers.CharField()
    status = serializers.CharField()
    visibility = serializers.CharField()
    project_id = serializers.UUIDField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())


class MemoryGraduateDataSerializer(serializers.Serializer[Any]):
    verdict = serializers.ChoiceField(
        choices=["created", "gated_to_draft", "duplicate", "deduplicated"]
    )
    created = serializers.BooleanField()
    article = GraduatedArticleSerializer()


class MemoryGraduateOutputSerializer(serializers.Serializer[Any]):
    data: Any = MemoryGraduateDataSerializer()
    meta = serializers.DictField()


class MemoryGraduateApi(TenantApi):
    @extend_schema(
        operation_id="memory_graduate",
        request=MemoryGraduateInputSerializer,
        responses={
            201: MemoryGraduateOutputSerializer,
            200: MemoryGraduateOutputSerializer,
            503: ErrorSerializer,
            **WRITE_ERRORS,
        },
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Graduate one of your memories into the knowledge wiki through its novelty gate.

        201 with a new article (`created`, or `gated_to_draft` for a near-duplicate draft);
        200 when it was already represented (`duplicate`, `deduplicated`) or already
        graduated. `re_scope: "global"` makes a project memory tenant-wide on its first
        graduation only (else 409 `already_graduated`). The article is owner-visible. 503
        `gate_unavailable` when embeddings are down (nothing stamped; retry).
        """
        payload = MemoryGraduateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        re_scope = payload.validated_data.get("re_scope")
        result = memory_graduate(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            memory_id=payload.validated_data["memory_id"],
            re_scope=re_scope if re_scope is None else str(re_scope),
        )
        article = result.article
        data = {
            "verdict": result.verdict,
            "created": result.created,
            "article": {
                "id": article.pk,
                "title": article.title,
                "category": article.category,
                "status": article.status,
                "visibility": article.visibility,
                "project_id": article.project_id,
                "tags": article.tags,
            },
        }
        return Response(
            {"data": MemoryGraduateDataSerializer(data).data, "meta": {}},
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )
