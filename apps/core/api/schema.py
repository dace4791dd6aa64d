"""The OpenAPI generator: every operation documents every status the platform can return.

Views declare their own success and domain errors with ``@extend_schema(responses=...)``; the
statuses that come from the shared machinery are added here, so no operation can forget one:

- 401/403 on authenticated views (the key, its role), and 429 (a rate-limit bucket, the
  subject's requests in flight, or too many failed authentications from the caller's address);
- 422 everywhere (the input contract also covers query strings and path parameters), and 414
  everywhere (a URL over ``REQUEST_URL_MAX_BYTES``);
- 400 ``invalid_json``, 413 ``payload_too_large`` and 415 on operations that take a body;
- 404 where the path names a resource; 423 on writes a custody halt freezes.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from typing_extensions import override

from apps.core.api.serializers import ErrorSerializer

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


#: A string with something besides whitespace.
NOT_BLANK = r"\S"


class EngramAutoSchema(AutoSchema):
    """Request schemas refuse what the input serializers refuse, where OpenAPI can say it:

    - a ``CharField`` that may not be blank has ``minLength: 1`` (and ``pattern: \\S`` when it
      trims whitespace, since a blank-after-trimming value is refused too);
    - a list of nested items that may not be empty has ``minItems: 1``;
    - an input serializer's ``request_schema_rules`` (cross-field rules: "one of these
      fields", "these fields for this tier") are merged into its request component.

    Rules OpenAPI cannot state (a project of this tenant, a time in the future) are in the
    fields' descriptions and the operations' docstrings.
    """

    @override
    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request":
            return schema
        if (
            isinstance(field, serializers.CharField)
            and not field.allow_blank
            and schema.get("type") == "string"
            and "enum" not in schema
        ):
            schema.setdefault("minLength", 1)
            if field.trim_whitespace and "pattern" not in schema:
                schema["pattern"] = NOT_BLANK
        if (
            isinstance(field, serializers.ListSerializer)
            and not field.allow_empty
            and schema.get("type") == "array"
        ):
            schema.setdefault("minItems", 1)
        return schema

    @override
    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        rules = getattr(serializer, "request_schema_rules", None)
        if direction == "request" and rules:
            schema.update(rules)
        return schema

    @override
    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        for code in self._platform_statuses():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(
                    ErrorSerializer, str(code), None, direction
                )
        return responses

    def _platform_statuses(self) -> list[int]:
        view = self.view
        codes = [414, 422]
        authenticated = not any(
            isinstance(permission, AllowAny) for permission in view.get_permissions()
        )
        if authenticated:
            codes += [401, 403, 429]
        if self.method in BODY_METHODS:
            codes += [400, 413, 415]
        if "{" in self.path:
            codes.append(404)
        if self.method in getattr(view, "halted_methods", frozenset()):
            codes.append(423)
        return codes
