"""The OpenAPI document's endpoint, ``/api/schema/``, and the pages that render it."""

from __future__ import annotations

import threading
from typing import Any

from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

_schema_generation = threading.Lock()


class SchemaView(SpectacularAPIView):
    """``/api/schema/``, generated one request at a time per process.

    drf-spectacular resolves its extensions' target classes lazily and not thread-safely: two
    threads generating the first schema of a process at once can fail one of them with a 500.
    """

    @override
    def _get_schema_response(self, request: Request) -> Response:
        with _schema_generation:
            response: Response = super()._get_schema_response(request)
            return response


#: The API docs pages reach nothing but this deployment: their bundles, fonts and images are
#: its own static files and the schema its own endpoint. The policy keeps it so (ReDoc's
#: sidebar links a logo from its vendor's CDN; the browser never fetches it). Styles are
#: inline in both bundles; ReDoc runs its search in a worker built from a blob.
DOCS_CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class SwaggerUiView(SpectacularSwaggerSplitView):
    """``/api/docs/``: Swagger UI from this deployment's static files. Its start-up script is
    a second request to the same URL, so the page needs no inline script."""

    @override
    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return response


class RedocView(SpectacularRedocView):
    """``/api/redoc/``: ReDoc from this deployment's static files, without the web fonts the
    stock page loads from Google (ReDoc falls back to the system's)."""

    template_name = "core/redoc.html"

    @override
    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return response
