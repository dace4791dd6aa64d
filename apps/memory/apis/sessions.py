"""The session tier read side: one session's turns (/api/v1/memory/sessions/{session_id})."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import OffsetField
from apps.core.api.serializers import COMMON_ERRORS
from apps.memory.apis.common import ListMetaSerializer, SessionTurnOutputSerializer
from apps.memory.selectors import session_history
from apps.tenancy.api_base import TenantApi


class SessionHistoryOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = SessionTurnOutputSerializer(many=True)
    meta = ListMetaSerializer()


class SessionHistoryFilterSerializer(serializers.Serializer[dict[str, Any]]):
    limit = serializers.IntegerField(required=False, default=200, min_value=1, max_value=1000)
    offset = OffsetField()


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
