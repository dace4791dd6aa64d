"""OpenAPI 3 via drf-spectacular. https://drf-spectacular.readthedocs.io/en/latest/settings.html"""

SPECTACULAR_SETTINGS = {
    "TITLE": "Engram API",
    "DESCRIPTION": (
        "Self-hosted memory for AI agents: a session tier, a long-term tier recalled by meaning, "
        "promotion, a curated knowledge wiki and merged recall. Every call authenticates with "
        "`Authorization: Bearer <key>`; scope is derived from the key, never from the request. "
        "No string of a request (a body's values and keys, a query or path parameter) may hold a "
        "NUL character or an unpaired surrogate: 422 `invalid_text`. Rules a schema cannot "
        "state (a project of the caller's tenant, an expiry in the future) are in the fields' "
        "and operations' descriptions, with their 422 codes."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # Swagger UI (/api/docs/) and ReDoc (/api/redoc/) load their bundles from this deployment's
    # static files, never a CDN: the docs render offline and behind egress filters.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ProjectStatusEnum": "apps.projects.models.ProjectStatus",
    },
}
