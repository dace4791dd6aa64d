"""A URLconf with probe views that exercise TenantApi and the error handler directly."""

from django.urls import include, path
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.exceptions import Conflict
from apps.tenancy.api_base import TenantApi
from apps.tenancy.models import ApiKeyRole


class ProbeInputSerializer(serializers.Serializer[dict[str, object]]):
    query = serializers.CharField()
    limit = serializers.IntegerField(min_value=1, max_value=10, required=False)

    def validate_query(self, value: str) -> str:
        if value == "bad":
            raise serializers.ValidationError("bad query", code="invalid_query")
        return value


class ProbeWriteApi(TenantApi):
    def post(self, request: Request) -> Response:
        payload = ProbeInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return Response({"data": {"subject_id": self.scope.subject_id}, "meta": {}})


class ProbeReadPostApi(TenantApi):
    halted_methods = frozenset()

    def post(self, request: Request) -> Response:
        return Response({"data": {"ok": True}, "meta": {}})


class ProbeUserOnlyApi(TenantApi):
    allowed_roles = frozenset({ApiKeyRole.USER})

    def get(self, request: Request) -> Response:
        return Response({"data": {"ok": True}, "meta": {}})


class ProbeCrashApi(TenantApi):
    def get(self, request: Request) -> Response:
        raise RuntimeError("boom")


class ProbeConflictApi(TenantApi):
    def get(self, request: Request) -> Response:
        raise Conflict("taken", code="thing_taken", details={"id": 1})


urlpatterns = [
    path("probe/write", ProbeWriteApi.as_view()),
    path("probe/read-post", ProbeReadPostApi.as_view()),
    path("probe/user-only", ProbeUserOnlyApi.as_view()),
    path("probe/crash", ProbeCrashApi.as_view()),
    path("probe/conflict", ProbeConflictApi.as_view()),
    path("", include("config.urls")),
]

handler400 = "apps.core.api.exception_handlers.bad_request_view"
handler403 = "apps.core.api.exception_handlers.permission_denied_view"
handler404 = "apps.core.api.exception_handlers.not_found_view"
handler500 = "apps.core.api.exception_handlers.server_error_view"
