"""Envelope serializers shared by every API, for the OpenAPI schema."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import Field, SkipField, _UnvalidatedField
from rest_framework.relations import PKOnlyObject


class TimeWindowSerializer(serializers.Serializer[dict[str, Any]]):
    """A time window a recall's question named (``meta.time_window``)."""

    start = serializers.DateTimeField(
        allow_null=True, help_text="Where the window starts (inclusive); null when open."
    )
    end = serializers.DateTimeField(
        allow_null=True, help_text="Where it ends (exclusive); null when open."
    )
    phrase = serializers.CharField(help_text="The question's words it was read from.")
    preferred = serializers.IntegerField(
        help_text="How many hits were ranked first because they held or happened in it."
    )
    anchor = serializers.UUIDField(
        allow_null=True,
        help_text='The memory that placed the event the window is anchored to ("before the '
        'move": the memory of the move, whose time ends the window); null for a window named '
        "by time words.",
    )


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
    here. Each row is rendered by :func:`compile_representation`'s plan, which gives what the
    serializer's ``to_representation`` gives."""
    render = _renderer(serializer_class)
    return [render(instance) for instance in instances]


_RENDERERS: dict[type[serializers.BaseSerializer[Any]], Callable[[Any], dict[str, Any]]] = {}


def _renderer(
    serializer_class: type[serializers.BaseSerializer[Any]],
) -> Callable[[Any], dict[str, Any]]:
    render = _RENDERERS.get(serializer_class)
    if render is None:
        serializer = serializer_class()
        # Bind the fields (a cached property) before the instance is shared between threads;
        # two first callers may each build one, and either serves.
        getattr(serializer, "fields", None)
        render = compile_representation(serializer)
        _RENDERERS[serializer_class] = render
    return render


# Fields whose ``to_representation`` is one builtin conversion (DRF's own, for these exact
# classes; a subclass may change it, so it goes the general way).
_CONVERSIONS: dict[type[serializers.Field[Any, Any, Any, Any]], Callable[[Any], Any]] = {
    serializers.CharField: str,
    serializers.IntegerField: int,
    serializers.FloatField: float,
}


def compile_representation(
    serializer: serializers.BaseSerializer[Any],
) -> Callable[[Any], dict[str, Any]]:
    """``serializer.to_representation`` as a plan made once: per readable field, how to read
    its value and how to convert it. DRF works both out again for every field of every row
    (its ``get_attribute`` walk, the ``PKOnlyObject`` check, a method call per field), which
    is most of what rendering a memory costs.

    A field named after a plain attribute is read with ``getattr``; whenever that would not
    give what DRF's ``get_attribute`` gives (a mapping, a missing attribute, a callable value)
    the field's own ``get_attribute`` answers instead, raising what it raises. Values convert
    through the one builtin DRF applies for its plain scalar, UUID and list or dict fields,
    and through the field's own ``to_representation`` otherwise. A serializer that defines
    its own ``to_representation`` is rendered by it."""
    if not isinstance(serializer, serializers.Serializer) or (
        type(serializer).to_representation is not serializers.Serializer.to_representation
    ):
        return serializer.to_representation
    plan = [
        (str(field.field_name), _reader(field), _conversion(field))
        for field in serializer._readable_fields
    ]

    def render(instance: Any) -> dict[str, Any]:
        if isinstance(instance, Mapping):
            return serializer.to_representation(instance)
        rendered: dict[str, Any] = {}
        for name, read, convert in plan:
            try:
                value = read(instance)
            except SkipField:
                continue
            rendered[name] = None if value is None else convert(value)
        return rendered

    return render


def _reader(field: serializers.Field[Any, Any, Any, Any]) -> Callable[[Any], Any]:
    if field.source == "*":
        return lambda instance: instance
    general = field.get_attribute
    if type(field).get_attribute is not Field.get_attribute:
        # A relation reads a PKOnlyObject, rendered as null when its pk is.
        def read_relation(instance: Any) -> Any:
            value = general(instance)
            return None if isinstance(value, PKOnlyObject) and value.pk is None else value

        return read_relation
    if len(field.source_attrs) != 1:
        return general
    attribute = field.source_attrs[0]

    def read(instance: Any) -> Any:
        try:
            value = getattr(instance, attribute)
        except Exception:
            return general(instance)  # DRF's answer for what is missing or does not exist
        return general(instance) if callable(value) else value

    return read


def _conversion(field: serializers.Field[Any, Any, Any, Any]) -> Callable[[Any], Any]:
    kind = type(field)
    if kind in _CONVERSIONS:
        return _CONVERSIONS[kind]
    if isinstance(field, serializers.UUIDField) and kind is serializers.UUIDField:
        if field.uuid_format == "hex_verbose":
            return str
    elif isinstance(field, serializers.ListField) and kind is serializers.ListField:
        child = _conversion(field.child)
        return lambda items: [None if item is None else child(item) for item in items]
    elif (
        isinstance(field, serializers.DictField)
        and kind is serializers.DictField
        and type(field.child) is _UnvalidatedField
    ):
        return lambda mapping: {str(key): value for key, value in mapping.items()}
    return field.to_representation
