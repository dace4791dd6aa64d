"""The OpenAPI document's endpoint, ``/api/schema/``."""

from __future__ import annotations

import threading

from drf_spectacular.views import SpectacularAPIView
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
