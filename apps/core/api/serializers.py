"""Envelope serializers shared by every API, for the OpenAPI schema."""

from collections.abc import Iterable
from typing import Any

from rest_framework import serializers


class ErrorBodySerializer(serializers.Serializer[dict[str, object]]):
    code = serializers.CharField(help_text="Stable snake_case error code.")
    message = serializers.CharField()
    details = serializers.DictField()


class ErrorSerializer(serializers.Serializer[dict[str, object]]):
    error = ErrorBodySerializer()


class HealthDataSerializer(serializers.Serializer[dict[str, object]]):
    status = serializers.CharField()
    checks = serializers.DictField(child=serializers.CharField(), required=False)
    replica = serializers.DictField(
        required=False,
        help_text="The heavy-read replica: configured, available, lag_seconds, lag_bytes, "
        "bypass_reason (why heavy reads go to the primary now).",
    )


class HealthOutputSerializer(serializers.Serializer[dict[str, object]]):
    # `data: Any`: a field named `data` shadows Serializer.data for the type checker.
    data: Any = HealthDataSerializer()
    meta = serializers.DictField()


#: The error responses almost every authenticated endpoint can return.
COMMON_ERRORS = {401: ErrorSerializer, 403: ErrorSerializer, 422: ErrorSerializer}


def render_many(
    serializer_class: type[serializers.BaseSerializer[Any]], instances: Iterable[Any]
) -> list[dict[str, Any]]:
    """Render a list of rows with one serializer (``many=True``), not one per row: every
    serializer instance deep-copies its declared fields, which for a ten-hit recall cost
    more than the recall itself."""
    return list(serializer_class(instances, many=True).data)
