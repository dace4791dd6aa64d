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


class HealthReplicaSerializer(serializers.Serializer[dict[str, object]]):
    configured = serializers.BooleanField()
    available = serializers.BooleanField()
    lag_seconds = serializers.FloatField(allow_null=True)
    lag_bytes = serializers.IntegerField(allow_null=True)
    bypass_reason = serializers.CharField(
        allow_null=True, help_text="Why heavy reads go to the primary now, or null."
    )


class HealthDataSerializer(serializers.Serializer[dict[str, object]]):
    status = serializers.CharField()
    checks = serializers.DictField(child=serializers.CharField(), required=False)
    replica = HealthReplicaSerializer(
        required=False,
        help_text="The heavy-read replica, when one is configured (readyz only).",
    )


class HealthOutputSerializer(serializers.Serializer[dict[str, object]]):
    # `data: Any`: a field named `data` shadows Serializer.data for the type checker.
    data: Any = HealthDataSerializer()
    meta = serializers.DictField()


#: The error responses almost every authenticated endpoint can return.
COMMON_ERRORS = {401: ErrorSerializer, 403: ErrorSerializer, 422: ErrorSerializer}
#: A write can also miss its target, conflict, meet a halted tenant (423) or be rate limited.
WRITE_ERRORS = {
    **COMMON_ERRORS,
    404: ErrorSerializer,
    409: ErrorSerializer,
    423: ErrorSerializer,
    429: ErrorSerializer,
}


def render_many(
    serializer_class: type[serializers.BaseSerializer[Any]], instances: Iterable[Any]
) -> list[dict[str, Any]]:
    """Render rows with the process's one instance of ``serializer_class``: every serializer
    DRF instantiates deep-copies its declared fields (a memory has twenty), so a
    rendering serializer is built once and its bound fields reused. Rendering only reads them,
    so request threads share it; a serializer that reads its ``context`` cannot go through
    here."""
    renderer = _renderer(serializer_class)
    return [renderer.to_representation(instance) for instance in instances]


_RENDERERS: dict[type[serializers.BaseSerializer[Any]], serializers.BaseSerializer[Any]] = {}


def _renderer(
    serializer_class: type[serializers.BaseSerializer[Any]],
) -> serializers.BaseSerializer[Any]:
    renderer = _RENDERERS.get(serializer_class)
    if renderer is None:
        renderer = serializer_class()
        # Bind the fields (a cached property) before the instance is shared between threads;
        # two first callers may each build one, and either serves.
        getattr(renderer, "fields", None)
        _RENDERERS[serializer_class] = renderer
    return renderer
