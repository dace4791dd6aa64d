"""The OpenAPI generator: every operation documents every status the platform can return.

Views declare their own success and domain errors with ``@extend_schema(responses=...)``; the
statuses that come from the shared machinery are added here, so no operation can forget one:

- 401/403 on authenticated views (the key, its role), and 429 (a rate-limit bucket, or too
  many failed authentications from the caller's address);
- 422 everywhere (the input contract also covers query strings and path parameters), and 414
  everywhere (a URL over ``REQUEST_URL_MAX_BYTES``);
- 400 ``invalid_json``, 413 ``payload_too_large`` and 415 on operations that take a body;
- 404 where the path names a resource; 423 on writes a custody halt freezes.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from rest_framework.permissions import AllowAny
from typing_extensions import override

from apps.core.api.serializers import ErrorSerializer

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class EngramAutoSchema(AutoSchema):
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
