from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.serializers import COMMON_ERRORS
from apps.tenancy.api_base import TenantApi


class WhoamiDataSerializer(serializers.Serializer[dict[str, object]]):
    tenant_id = serializers.UUIDField()
    tenant_slug = serializers.CharField()
    role = serializers.CharField()
    subject_id = serializers.CharField()
    agent_id = serializers.CharField(allow_blank=True)
    impersonating = serializers.BooleanField()
    tenant_halted = serializers.BooleanField()


class WhoamiOutputSerializer(serializers.Serializer[dict[str, object]]):
    data: Any = WhoamiDataSerializer()
    meta = serializers.DictField()


class WhoamiApi(TenantApi):
    rate_limit_exempt = {"GET": "answers from the authenticated key alone"}

    @extend_schema(
        operation_id="whoami",
        responses={200: WhoamiOutputSerializer, **COMMON_ERRORS},
        tags=["tenancy"],
    )
    def get(self, request: Request) -> Response:
        """Who this key is: its tenant, role and the memory subject it acts as."""
        scope = self.scope
        data = {
            "tenant_id": scope.tenant.id,
            "tenant_slug": scope.tenant.slug,
            "role": scope.role,
            "subject_id": scope.subject_id,
            "agent_id": scope.agent_id,
            "impersonating": scope.impersonating,
            "tenant_halted": scope.tenant.is_halted,
        }
        return Response({"data": WhoamiDataSerializer(data).data, "meta": {}})
