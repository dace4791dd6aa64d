"""Input fields every API shares, so one rule has one implementation and one schema."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from typing_extensions import override

from apps.core.exceptions import CoreErrorCode

#: The largest integer any query or body parameter accepts unless it says less: Postgres'
#: ``integer``, so no bound is left to the database (which would answer 500).
INT32_MAX = 2**31 - 1


class OffsetField(serializers.IntegerField):
    """A pagination offset: 0 ≤ offset ≤ 2³¹−1, default 0."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", 0)
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", INT32_MAX)
        super().__init__(**kwargs)


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
