"""Django REST framework and the API's input bounds.

https://www.django-rest-framework.org/api-guide/settings/
"""

from config.env import env

# The input contract (apps/core/api/input.py). A body over this is 413 payload_too_large.
REQUEST_BODY_MAX_BYTES = env.int("ENGRAM_REQUEST_BODY_MAX_BYTES", default=1024 * 1024)
# A path plus query string longer than this is 414 uri_too_long. Gunicorn's own request-line
# bound (config/gunicorn.py) sits above it, so the API's envelope answers first.
REQUEST_URL_MAX_BYTES = env.int("ENGRAM_REQUEST_URL_MAX_BYTES", default=4096)
# JSON nesting deeper than this is 422 json_too_deep.
REQUEST_JSON_MAX_DEPTH = env.int("ENGRAM_REQUEST_JSON_MAX_DEPTH", default=32)
# A metadata object larger than this once serialized is 422 metadata_too_large.
METADATA_MAX_BYTES = env.int("ENGRAM_METADATA_MAX_BYTES", default=16 * 1024)
# Django's own bound on request.body, for any code path that reads it whole.
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_BODY_MAX_BYTES

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.tenancy.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.core.api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "apps.core.api.schema.EngramAutoSchema",
    "EXCEPTION_HANDLER": "apps.core.api.exception_handlers.engram_exception_handler",
    "UNAUTHENTICATED_USER": None,
    "UNAUTHENTICATED_TOKEN": None,
}
