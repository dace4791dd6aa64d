"""Envelope serializers shared by every API, for the OpenAPI schema."""

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


class HealthOutputSerializer(serializers.Serializer[dict[str, object]]):
    # `data: Any`: a field named `data` shadows Serializer.data for the type checker.
    data: Any = HealthDataSerializer()
    meta = serializers.DictField()


#: The error responses almost every authenticated endpoint can return.
COMMON_ERRORS = {401: ErrorSerializer, 403: ErrorSerializer, 422: ErrorSerializer}
