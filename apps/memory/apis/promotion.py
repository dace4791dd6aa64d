"""Promotion of a session into long-term memories (POST /api/v1/memory/promote)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import CheckedCharField, CheckedInputSerializer
from apps.core.api.serializers import WRITE_ERRORS
from apps.memory.models import SESSION_ID_MAX_LENGTH
from apps.memory.services import promotion_request, validate_promotion_session_id
from apps.tenancy.api_base import TenantApi, idempotent


class MemoryPromoteInputSerializer(CheckedInputSerializer):
    # Checked by the service's own validator so the API, MCP and the stop hook share one
    # contract: anything but a non-blank string of ≤ 200 characters is invalid_session_id.
    session_id = CheckedCharField(
        check=validate_promotion_session_id, min_length=1, max_length=SESSION_ID_MAX_LENGTH
    )


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
        `too_few_turns`, `already_queued`). Over your share of the hourly budget
        (`ENGRAM_PROMOTION_SUBJECT_BUDGET_PER_HOUR`) or the tenant's whole budget → 429
        `budget_exceeded` (`details.scope`: `subject` or `tenant`) with `Retry-After`, and no
        LLM call is made.
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
