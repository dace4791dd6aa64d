"""Fields every API shares, so one rule has one implementation and one schema."""

from __future__ import annotations

import copy
import datetime
import json
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty
from typing_extensions import override

from apps.core.exceptions import CoreErrorCode

#: The largest integer any query or body parameter accepts unless it says less: Postgres'
#: ``integer``, so no bound is left to the database (which would answer 500).
INT32_MAX = 2**31 - 1


class TimestampField(serializers.DateTimeField):
    """A timestamp, rendered in UTC (``…Z``) and read as UTC when it names no offset.

    The zone is fixed on the field rather than looked up per value: DRF otherwise asks Django
    for the active time zone (a context-local read) for every timestamp it renders, a third of
    the cost of rendering a memory, and the API's contract is UTC whatever ``TIME_ZONE`` says.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default_timezone=datetime.UTC, **kwargs)


class OffsetField(serializers.IntegerField):
    """A pagination offset: 0 ≤ offset ≤ 2³¹−1, default 0."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", 0)
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", INT32_MAX)
        super().__init__(**kwargs)


class LimitField(serializers.IntegerField):
    """A page or result size: optional, 1 ≤ limit ≤ ``max_value``, ``default`` when absent."""

    def __init__(self, *, default: int, max_value: int, **kwargs: Any) -> None:
        super().__init__(default=default, min_value=1, max_value=max_value, **kwargs)


class MetadataField(serializers.DictField):
    """A JSON object of at most ``METADATA_MAX_BYTES`` once serialized (422
    ``metadata_too_large``). Its keys and strings obey the input contract like any body text."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            f"A JSON object, at most {settings.METADATA_MAX_BYTES} bytes serialized.",
        )
        super().__init__(**kwargs)

    @override
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value: dict[str, Any] = super().to_internal_value(data)
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        limit = settings.METADATA_MAX_BYTES
        if size > limit:
            raise serializers.ValidationError(
                f"metadata is {size} bytes serialized; at most {limit}.",
                code=CoreErrorCode.METADATA_TOO_LARGE,
            )
        return value


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "description": "A project UUID; absent, null or blank means the global bucket.",
        "anyOf": [{"format": "uuid"}, {"maxLength": 0}],
    }
)
class ProjectIdField(serializers.Field):  # type: ignore[type-arg]
    """A project scope: a UUID, or null / blank for the global bucket.

    Anything else is 422 ``invalid_project_id`` (the spec's code for a malformed id); whether
    the id is a project of the caller's tenant is the service's check, with the same code.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("default", None)
        super().__init__(**kwargs)

    @override
    def to_internal_value(self, data: Any) -> uuid.UUID | None:
        if isinstance(data, str) and not data.strip():
            return None
        if isinstance(data, str):
            try:
                return uuid.UUID(data)
            except ValueError:
                pass
        raise serializers.ValidationError(
            "project_id must be a project's UUID (or blank for the global bucket).",
            code=CoreErrorCode.INVALID_PROJECT_ID,
        )

    @override
    def to_representation(self, value: Any) -> str | None:
        return None if value is None else str(value)


class _CheckedFieldMixin:
    """A typed input field whose value is checked by an app's own validator.

    Some inputs have a contract that a service or selector owns because every surface (the
    API, MCP, hooks) shares it: a wrong type, a blank or an over-long value is one stable
    code (422 ``invalid_query``, ``invalid_session_id`` …) with that validator's message. The
    field declares its real type (and bounds) for the schema, but DRF's own type, blank and
    length checks are not run on a present value: :class:`CheckedInputSerializer` hands it to
    ``check`` once every other field is valid, which is when the service used to see it. So
    the envelope is the validator's, and a body with other bad fields still answers with
    their ``validation_error`` first. A missing value is DRF's (``required`` / the default);
    ``null`` is DRF's too (``allow_null``), unless ``check_null`` hands it to ``check``.
    """

    def __init__(
        self, *args: Any, check: Callable[[Any], Any], check_null: bool = False, **kwargs: Any
    ) -> None:
        self.check = check
        self.check_null = check_null
        super().__init__(*args, **kwargs)

    def bind(self, field_name: str, parent: Any) -> None:
        if not isinstance(parent, CheckedInputSerializer):
            # Fail closed: anywhere else the value would go unchecked.
            raise TypeError(f"{field_name} must be declared on a CheckedInputSerializer")
        super().bind(field_name, parent)  # type: ignore[misc]

    def run_validation(self, data: Any = empty) -> Any:
        if data is empty or (data is None and not self.check_null):
            return super().run_validation(data)  # type: ignore[misc]
        return _Unchecked(data)


class _Unchecked:
    """A present value that awaits its field's ``check``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


DeclaredFields = dict[str, serializers.Field[Any, Any, Any, Any]]
_FIELD_TEMPLATES: dict[type[serializers.BaseSerializer[Any]], DeclaredFields] = {}


class InputSerializer(serializers.Serializer[dict[str, Any]]):
    """A request body's or query string's serializer, whose fields are copied cheaply.

    DRF deep-copies every declared field for every serializer it builds, which runs each
    field's constructor again: for a memory write that was most of validating the body
    (docs/benchmarks/load.md, "Recall bumps in place, cheaper request handling"). Here the
    declared fields are deep-copied once per class, and each instance binds shallow copies of
    those, as it would bind DRF's own. A shallow copy shares what the field built when it was
    constructed (validators, choices, a list's child), which validation only reads; attributes
    set on it after binding are its own. A nested serializer is deep-copied as before: it keeps
    state of its own.
    """

    @override
    def get_fields(self) -> DeclaredFields:
        templates = _FIELD_TEMPLATES.get(type(self))
        if templates is None:
            # Two first callers may each build one; either serves.
            templates = copy.deepcopy(self._declared_fields)
            _FIELD_TEMPLATES[type(self)] = templates
        return {
            name: copy.deepcopy(field)
            if isinstance(field, serializers.BaseSerializer)
            else copy.copy(field)
            for name, field in templates.items()
        }


class CheckedInputSerializer(InputSerializer):
    """An input serializer whose checked fields run their app validators, in declaration
    order, after every other field has validated."""

    @override
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for name, field in self.fields.items():
            key = field.source or name
            value = attrs.get(key)
            if isinstance(field, _CheckedFieldMixin) and isinstance(value, _Unchecked):
                attrs[key] = field.check(value.value)
        return attrs


class CheckedCharField(_CheckedFieldMixin, serializers.CharField):
    """A string checked by the app's validator (see :class:`_CheckedFieldMixin`)."""


class CheckedUUIDField(_CheckedFieldMixin, serializers.UUIDField):
    """A UUID checked by the app's validator (see :class:`_CheckedFieldMixin`)."""


class CheckedChoiceField(_CheckedFieldMixin, serializers.ChoiceField):
    """A choice checked by the app's validator (see :class:`_CheckedFieldMixin`)."""


class CheckedDictField(_CheckedFieldMixin, serializers.DictField):
    """A JSON object checked, shape and bounds, by the app's validator (see
    :class:`_CheckedFieldMixin`)."""


class CheckedListField(_CheckedFieldMixin, serializers.ListField):
    """A list checked, items and bounds, by the app's validator (see
    :class:`_CheckedFieldMixin`)."""


class QueryTextField(CheckedCharField):
    """A query read by meaning, checked by the app's query validator (``apps.core.queries``
    at ``max_chars``): null, blank or non-string is its ``invalid_query``, too long its
    ``query_too_long``. The schema states the same bounds."""

    def __init__(
        self,
        *,
        check: Callable[[Any], Any],
        max_chars: int,
        help_text: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            check=check,
            check_null=True,
            min_length=1,
            max_length=max_chars,
            help_text=help_text or f"1-{max_chars} characters, not blank.",
            **kwargs,
        )


class SessionIdField(CheckedCharField):
    """An optional session token, checked by the app's session-id validator (its
    ``invalid_session_id``); null means no session."""

    def __init__(self, *, check: Callable[[Any], Any], **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(check=check, allow_null=True, min_length=1, **kwargs)
