"""Long-term memories: write one, write a batch, list (/api/v1/memory, /memory/batch)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.core.api.fields import (
    CheckedCharField,
    CheckedInputSerializer,
    InputSerializer,
    LimitField,
    MetadataField,
    OffsetField,
    ProjectIdField,
    TimestampField,
)
from apps.core.api.serializers import COMMON_ERRORS, WRITE_ERRORS, render_many
from apps.core.db.filters import FILTER_HELP, record_filter_parse_text
from apps.core.exceptions import ValidationFailed
from apps.memory.apis.common import (
    ListMetaSerializer,
    MemoryOutputSerializer,
    MemoryWrittenField,
    SessionTurnOutputSerializer,
)
from apps.memory.exceptions import MemoryErrorCode
from apps.memory.models import SESSION_ID_MAX_LENGTH, MemorySource, SessionRole
from apps.memory.selectors import memory_list, memory_list_all_subjects
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_embed_now,
    memory_supersede,
    memory_write_batch,
)
from apps.tenancy.api_base import MEMORY_WRITE, TenantApi, idempotent
from apps.tenancy.scope import RequestScope


class MemoryListOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = MemoryOutputSerializer(many=True)
    meta = ListMetaSerializer()


class MemoryWriteOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = MemoryWrittenField(help_text="The memory (long_term) or the turn (session).")
    meta = serializers.DictField()


#: The session tier's rule in the schema: a turn names when it expires (422
#: ``expires_at_required`` without either field).
EXPIRY_REQUIRED: list[dict[str, Any]] = [
    {"required": ["expires_at"]},
    {"required": ["ttl_seconds"]},
]


def _session_id_string(value: object) -> str:
    if not isinstance(value, str):
        raise ValidationFailed(
            "session_id must be a string.", code=MemoryErrorCode.INVALID_SESSION_ID
        )
    return value


class MemoryWriteInputSerializer(CheckedInputSerializer):
    """One write. ``tier`` picks the fields that apply; scope fields in a body are ignored."""

    # The cross-field rules validate() applies, for the request schema: a long-term write has
    # a non-blank text; a turn has its session, content and expiry. (A pattern, not an enum,
    # picks the tier: drf-spectacular would name an enum here as a component of its own.)
    request_schema_rules: ClassVar[dict[str, Any]] = {
        "anyOf": [
            {
                "not": {"required": ["tier"]},
                "properties": {"text": {"pattern": r"\S"}},
                "required": ["text"],
            },
            {
                "properties": {"tier": {"pattern": "^long_term$"}, "text": {"pattern": r"\S"}},
                "required": ["tier", "text"],
            },
            {
                "properties": {"tier": {"pattern": "^session$"}},
                "required": ["tier", "session_id", "content"],
                "anyOf": EXPIRY_REQUIRED,
            },
        ]
    }

    tier = serializers.ChoiceField(
        choices=["long_term", "session"],
        default="long_term",
        help_text="`session` on a single write (POST /api/v1/memory) is deprecated: append a "
        "turn with POST /api/v1/memory/sessions/{session_id}/turns. Batches keep it.",
    )
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
    metadata = MetadataField(required=False)
    project_id = ProjectIdField()
    confidence = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
    supersedes = serializers.UUIDField(required=False, allow_null=True)
    embed_now = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Embed the memory before the write answers (one embedding call), so semantic "
        "recall finds it at once, not only keyword recall. If the provider is unavailable the "
        "write still succeeds and the memory stays `pending`.",
    )
    valid_from = TimestampField(
        required=False,
        help_text="ISO 8601: when the fact became true, if not when it happened (`occurred_at`, "
        "the default). Superseding ends the old memory's validity here; a correction that "
        "was always true takes the old memory's `valid_from`.",
    )
    # both tiers
    occurred_at = TimestampField(
        required=False,
        help_text="ISO 8601: when it happened or was said (importing history with its real "
        "dates). Default: the time of the write.",
    )
    # session
    # The session tier checks the id (with the item's index), so a batch refuses one no
    # session may have as every session endpoint does: 422 invalid_session_id, never DRF's
    # validation_error. An id is kept exactly as given.
    session_id = CheckedCharField(
        check=_session_id_string,
        required=False,
        min_length=1,
        max_length=SESSION_ID_MAX_LENGTH,
        trim_whitespace=False,
        help_text="tier=session. Deprecated on a single write: the session is the URL of "
        "POST /api/v1/memory/sessions/{session_id}/turns.",
    )
    content = serializers.CharField(required=False, trim_whitespace=False)
    role = serializers.ChoiceField(choices=SessionRole.values, required=False)
    expires_at = TimestampField(required=False)
    ttl_seconds = serializers.IntegerField(
        required=False, min_value=1, max_value=settings.SESSION_MAX_TTL_SECONDS
    )

    @override
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
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
            session_turn_validate(
                attrs,
                required=("session_id", "content"),
                message="This field is required for tier=session.",
            )
        return attrs


#: The fields a session turn takes, declared once on :class:`MemoryWriteInputSerializer`;
#: ``POST /memory/sessions/{session_id}/turns`` validates its body with these same fields.
SESSION_TURN_FIELDS = ("content", "role", "metadata", "occurred_at", "expires_at", "ttl_seconds")


def session_turn_validate(
    attrs: dict[str, Any], *, required: tuple[str, ...], message: str = "This field is required."
) -> None:
    """The session tier's cross-field rules, for both ways of appending a turn."""
    missing = [name for name in required if not attrs.get(name)]
    if missing:
        raise serializers.ValidationError(
            {name: [message] for name in missing},
            code="required",
        )
    if "expires_at" not in attrs and "ttl_seconds" not in attrs:
        raise serializers.ValidationError(
            {"expires_at": ["expires_at or ttl_seconds is required."]},
            code="expires_at_required",
        )


class MemoryBatchInputSerializer(InputSerializer):
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


class MemoryListFilterSerializer(CheckedInputSerializer):
    project_id = serializers.UUIDField(required=False)
    source = serializers.ChoiceField(  # type: ignore[assignment] # shadows Field.source
        choices=MemorySource.values, required=False
    )
    tags = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        max_length=50,
        help_text="Only memories carrying every one of these tags (repeat the parameter).",
    )
    # JSON text, parsed and checked by the selector's own parser (422 `invalid_filter`).
    filter = CheckedCharField(
        check=record_filter_parse_text,
        required=False,
        allow_blank=True,
        help_text=f"A JSON object (URL-encoded). {FILTER_HELP}",
    )
    include_superseded = serializers.BooleanField(required=False, default=False)
    as_of = TimestampField(
        required=False,
        help_text="ISO 8601: the memories that held at this time (valid time), superseded since "
        "or not; `include_superseded` does not apply.",
    )
    all_subjects = serializers.BooleanField(required=False, default=False)
    limit = LimitField(default=50, max_value=settings.MEMORY_LIST_MAX_LIMIT)
    offset = OffsetField()


def _long_term_draft(item: dict[str, Any]) -> MemoryDraft:
    return MemoryDraft(
        text=item["text"],
        context=item.get("context", ""),
        tags=item.get("tags", []),
        metadata=item.get("metadata", {}),
        project_id=item.get("project_id"),
        confidence=item.get("confidence", 1.0),
        occurred_at=item.get("occurred_at"),
        valid_from=item.get("valid_from"),
    )


def _session_draft(item: dict[str, Any]) -> SessionTurnDraft:
    return SessionTurnDraft(
        session_id=item["session_id"],
        content=item["content"],
        role=item.get("role", SessionRole.USER),
        metadata=item.get("metadata", {}),
        expires_at=item.get("expires_at"),
        ttl_seconds=item.get("ttl_seconds"),
        occurred_at=item.get("occurred_at"),
    )


def session_turn_write(scope: RequestScope, turn: dict[str, Any]) -> dict[str, Any]:
    """Append one validated turn and render it as a tier=session write answers: the one
    path both ``POST /memory`` (tier=session) and ``POST /memory/sessions/{id}/turns`` take."""
    return _write_items(scope, [{**turn, "tier": "session"}])[0]


def _write_items(scope: RequestScope, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write a mixed batch: every item validated first, both tiers in one transaction."""
    long_term = [_long_term_draft(i) for i in items if i["tier"] == "long_term"]
    turns = [_session_draft(i) for i in items if i["tier"] == "session"]
    memories, rows = memory_write_batch(
        tenant=scope.tenant, subject_id=scope.subject_id, memories=long_term, turns=turns
    )
    long_term_items = [item for item in items if item["tier"] == "long_term"]
    embed_now = [
        memory
        for memory, item in zip(memories, long_term_items, strict=True)
        if item.get("embed_now")
    ]
    if embed_now:
        memory_embed_now(memories=embed_now)
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
    rate_limits = {"POST": MEMORY_WRITE}
    rate_limit_exempt = {"GET": "a page of rows by index, at most MEMORY_LIST_MAX_LIMIT"}

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
        the caller's live memory this one replaces; the old version is kept as history, and
        past `ENGRAM_MEMORY_QUOTA_SUPERSEDED_ROWS` kept versions it is 409
        `history_quota_exceeded`). Session (**deprecated** here: use
        `POST /api/v1/memory/sessions/{session_id}/turns`, which takes the same turn fields
        and answers the same body): `tier: "session"`, `session_id`, `content` (≤ 100 KB),
        `role`, and `expires_at` or `ttl_seconds`. Over quota → 409 `quota_exceeded` (live
        memories) or `session_quota_exceeded` (stored turns or bytes); over the write rate →
        429 `rate_limited` with `Retry-After`.
        """
        payload = MemoryWriteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        item = payload.validated_data
        if item["tier"] == "long_term" and item.get("supersedes"):
            memory = memory_supersede(
                tenant=self.scope.tenant,
                subject_id=self.scope.subject_id,
                memory_id=item["supersedes"],
                draft=_long_term_draft(item),
            )
            if item["embed_now"]:
                memory_embed_now(memories=[memory])
            data = {"tier": "long_term", **MemoryOutputSerializer(memory).data}
        elif item["tier"] == "session":
            data = session_turn_write(self.scope, item)
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

        `tags` keeps memories carrying every one of them; `filter` (JSON) narrows by tags and
        metadata as recall's does (docs/recall.md, "Filters").

        `all_subjects=true` lists every subject of the tenant, for a superadmin impersonating
        it (`X-Impersonate-Tenant`); for any other key the flag is ignored.
        """
        filters = MemoryListFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        args = dict(filters.validated_data)
        all_subjects = args.pop("all_subjects")
        args["narrowing"] = args.pop("filter", None)
        if all_subjects and self.scope.is_superadmin:
            page = memory_list_all_subjects(tenant=self.scope.tenant, **args)
        else:
            page = memory_list(tenant=self.scope.tenant, subject_id=self.scope.subject_id, **args)
        return Response(
            {"data": MemoryOutputSerializer(page.results, many=True).data, "meta": page.meta}
        )


class MemoryBatchMetaSerializer(serializers.Serializer[dict[str, Any]]):
    written = serializers.IntegerField(help_text="Items written: every item of the batch.")


class MemoryBatchOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = serializers.ListField(
        child=MemoryWrittenField(), help_text="The written items, in the order they were sent."
    )
    meta = MemoryBatchMetaSerializer()


class MemoryBatchApi(TenantApi):
    rate_limits = {"POST": MEMORY_WRITE}
    rate_cost_reads_body = True

    @override
    def rate_cost(self, request: Request) -> int:
        # Charged before validation, one per item; an items value validation will refuse (not
        # a list, empty, over MEMORY_BATCH_MAX_ITEMS) counts as one request.
        items = request.data.get("items") if isinstance(request.data, dict) else None
        if isinstance(items, list) and 0 < len(items) <= settings.MEMORY_BATCH_MAX_ITEMS:
            return len(items)
        return 1

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
        data = _write_items(self.scope, payload.validated_data["items"])
        return Response(
            {"data": data, "meta": {"written": len(data)}}, status=status.HTTP_201_CREATED
        )
