"""OpenAPI description of the bearer API-key authentication (imported in TenancyConfig.ready)."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from typing_extensions import override


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.tenancy.authentication.ApiKeyAuthentication"
    name = "ApiKeyBearer"

    @override
    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An Engram API key: `Authorization: Bearer eng_<prefix>_<secret>`.",
        }
