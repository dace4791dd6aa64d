"""The session tier by session: one session's turns (/api/v1/memory/sessions/{session_id}),
appended (…/turns), read in order, cleared, or trimmed one turn at a time (…/turns/{seq},
…/turns/last)."""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import unquote

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.core.api.fields import InputSerializer, LimitField, OffsetField
from apps.core.api.serializers import COMMON_ERRORS, WRITE_ERRORS
from apps.memory.apis.common import (
    ListMetaSerializer,
    SessionTurnOutputSerializer,
    SessionTurnWrittenSerializer,
)
from apps.memory.apis.memories import (
    EXPIRY_REQUIRED,
    SESSION_TURN_FIELDS,
    MemoryWriteInputSerializer,
    session_turn_validate,
    session_turn_write,
)
from apps.memory.selectors import session_history
from apps.memory.services import session_clear, session_id_validate, session_turn_delete
from apps.tenancy.api_base import MEMORY_WRITE, TenantApi, idempotent

SESSION_ID_PARAMETER = OpenApiParameter(
    "session_id",
    str,
    OpenApiParameter.PATH,
    description="1–200 characters of printable text (no control characters, not only "
    "whitespace; else 422 `invalid_session_id`). The segment is percent-decoded once more "
    "after HTTP's own decoding, so an id holding `%` or `/`, or the id `.` or `..`, is "
    "escaped first (`%` → `%25`, `/` → `%2F`, each dot of `.`/`..` → `%2E`) and then "
    "percent-encoded as usual: `team/a` is sent as `team%252Fa`.",
)


class SessionIdConverter:
    """A session id as one URL path segment, decoded once more after HTTP's decoding.

    The WSGI server percent-decodes the path before Django routes it, so ``%2F`` is already a
    ``/`` that splits the path, and HTTP stacks resolve ``.`` and ``..`` segments away. The
    id is therefore escaped once before its ordinary percent-encoding (``%`` → ``%25``, ``/``
    → ``%2F``, a dot-only id's dots → ``%2E``) and unescaped here. An id without those
    characters reads the same either way, so a client that encodes once still works for it.
    An empty segment reaches the view, which refuses it like any other invalid id.
    """

    regex = "[^/]*"

    def to_python(self, value: str) -> str:
        # Undecodable bytes become lone surrogates, which session_id_validate refuses.
        return unquote(value, errors="surrogateescape")

    def to_url(self, value: str) -> str:
        """The escaped id; ``reverse()`` percent-encodes it (``%`` too) as it does any path."""
        escaped = value.replace("%", "%25").replace("/", "%2F")
        return escaped.replace(".", "%2E") if escaped in {".", ".."} else escaped


class SessionHistoryMetaSerializer(ListMetaSerializer):
    limit = serializers.IntegerField(
        help_text="The page's size: the limit asked for, cut to "
        f"{settings.SESSION_HISTORY_MAX_TURNS} turns."
    )
    next_offset = serializers.IntegerField(
        allow_null=True,
        help_text="The offset of the next page; null after the last. A page may hold fewer "
        "turns than its limit (it stops before ENGRAM_SESSION_HISTORY_PAGE_MAX_BYTES).",
    )


class SessionHistoryOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionTurnOutputSerializer(many=True)
    meta = SessionHistoryMetaSerializer()


class SessionHistoryFilterSerializer(InputSerializer):
    # Up to 1000 is accepted, as before the page was bounded; the page holds at most
    # SESSION_HISTORY_MAX_TURNS, and meta.limit says so.
    limit = LimitField(default=200, max_value=1000)
    offset = OffsetField()


class SessionClearDataSerializer(serializers.Serializer[dict[str, Any]]):
    session_id = serializers.CharField()
    deleted = serializers.IntegerField(help_text="Turns deleted (0 for an unknown session).")


class SessionClearOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionClearDataSerializer()
    meta = serializers.DictField()


class SessionTurnDeleteOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionTurnOutputSerializer(help_text="The turn as it was before deletion.")
    meta = serializers.DictField()


class SessionTurnCreateInputSerializer(InputSerializer):
    """One turn for the session the URL names: the turn fields of a tier=session write, with
    the same rules and error codes. A session_id, tier or scope field in the body is ignored."""

    request_schema_rules: ClassVar[dict[str, Any]] = {"anyOf": EXPIRY_REQUIRED}

    @override
    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # The fields are MemoryWriteInputSerializer's own (one declaration, one validation);
        # content is required here because no tier decides it.
        fields = MemoryWriteInputSerializer().get_fields()
        turn_fields = {name: fields[name] for name in SESSION_TURN_FIELDS}
        turn_fields["content"].required = True
        return turn_fields

    @override
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        session_turn_validate(attrs, required=())
        return attrs


class SessionTurnCreateOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionTurnWrittenSerializer()
    meta = serializers.DictField()


class SessionTurnListApi(TenantApi):
    rate_limits = {"POST": MEMORY_WRITE}

    @extend_schema(
        operation_id="memory_session_turn_append",
        parameters=[SESSION_ID_PARAMETER],
        request=SessionTurnCreateInputSerializer,
        responses={201: SessionTurnCreateOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request, session_id: str) -> Response:
        """Append one turn to one of the caller's sessions; turns read back in append order.

        `content` (≤ 100 KB: 422 `content_too_large`), `role` (default `user`), `metadata`,
        `occurred_at`, and `expires_at` or `ttl_seconds` (422 `expires_at_required` without
        either; an `expires_at` in the past or beyond `ENGRAM_SESSION_MAX_TTL_SECONDS` is
        `invalid_expires_at`). The session is the URL's (one no session may have, such as a
        blank one or one over 200 characters, is 422 `invalid_session_id`); a `session_id` in
        the body is ignored, like every scope field. Past the subject's stored turns or bytes
        (`ENGRAM_SESSION_QUOTA_TURNS`, `ENGRAM_SESSION_QUOTA_BYTES`) it is 409
        `session_quota_exceeded` (`details.bound`: `turns` or `bytes`) and nothing is written;
        clearing sessions makes room. Replaces the deprecated `POST /api/v1/memory` with
        `tier: "session"`, with the same 201 body, quota and write rate (429 `rate_limited`
        with `Retry-After`).
        """
        session_id_validate(session_id)
        payload = SessionTurnCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = session_turn_write(self.scope, {**payload.validated_data, "session_id": session_id})
        return Response({"data": data, "meta": {}}, status=status.HTTP_201_CREATED)


class SessionHistoryApi(TenantApi):
    # Deletes are writes, but not item writes: like forgetting a memory, a clear is charged to
    # the other writes' bucket (the default), so an agent out of write rate can still clean up.
    rate_limit_exempt = {"GET": "a page of one session's turns by index"}

    @extend_schema(
        operation_id="memory_session_history",
        parameters=[SessionHistoryFilterSerializer, SESSION_ID_PARAMETER],
        responses={200: SessionHistoryOutputSerializer, **COMMON_ERRORS},
        tags=["memory"],
    )
    def get(self, request: Request, session_id: str) -> Response:
        """The caller's own turns of one session, in the order they were appended.

        An unknown session (or another subject's) is an empty page; an id no session may have
        is 422 `invalid_session_id`, as on every session endpoint. A page holds at most 200
        turns (`meta.limit`) and stops before the turn that would take it past
        `ENGRAM_SESSION_HISTORY_PAGE_MAX_BYTES` of content and metadata (1 MiB; a larger turn
        is a page of its own). Continue at `meta.next_offset` until it is null.
        """
        session_id_validate(session_id)
        filters = SessionHistoryFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = session_history(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            session_id=session_id,
            **filters.validated_data,
        )
        return Response(
            {
                "data": SessionTurnOutputSerializer(page.results, many=True).data,
                "meta": {**page.meta, "next_offset": page.next_offset},
            }
        )

    @extend_schema(
        operation_id="memory_session_clear",
        parameters=[SESSION_ID_PARAMETER],
        responses={200: SessionClearOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def delete(self, request: Request, session_id: str) -> Response:
        """Delete every turn of one of the caller's sessions, expired turns included.

        Only the caller's own (tenant, subject) session is touched: another subject's session
        of the same id is left as it is. An unknown session is `deleted: 0`, not a 404, so a
        clear can be repeated. Long-term memories already promoted from it stay.
        """
        deleted = session_clear(
            tenant=self.scope.tenant, subject_id=self.scope.subject_id, session_id=session_id
        )
        data = {"session_id": session_id, "deleted": deleted}
        return Response({"data": SessionClearDataSerializer(data).data, "meta": {}})


class SessionTurnDetailApi(TenantApi):
    @extend_schema(
        operation_id="memory_session_turn_delete",
        parameters=[SESSION_ID_PARAMETER, OpenApiParameter("seq", int, OpenApiParameter.PATH)],
        responses={200: SessionTurnDeleteOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def delete(self, request: Request, session_id: str, seq: int) -> Response:
        """Delete one live turn of the caller's session by its `seq`; returns the turn.

        A missing, expired or foreign turn is 404 `not_found`.
        """
        turn = session_turn_delete(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            session_id=session_id,
            seq=seq,
        )
        return Response({"data": SessionTurnOutputSerializer(turn).data, "meta": {}})


class SessionLastTurnApi(TenantApi):
    @extend_schema(
        operation_id="memory_session_turn_pop",
        parameters=[SESSION_ID_PARAMETER],
        responses={200: SessionTurnDeleteOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def delete(self, request: Request, session_id: str) -> Response:
        """Pop: delete the latest live turn of the caller's session and return it.

        An empty (or unknown, or fully expired) session is 404 `not_found`. With an
        `Idempotency-Key`, a retry returns the turn the first attempt popped and pops nothing
        more.
        """
        turn = session_turn_delete(
            tenant=self.scope.tenant, subject_id=self.scope.subject_id, session_id=session_id
        )
        return Response({"data": SessionTurnOutputSerializer(turn).data, "meta": {}})
