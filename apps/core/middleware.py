"""Input checks that run before routing: URL and body-size bounds, clean text in the URL.

A URL (path plus query string) over ``REQUEST_URL_MAX_BYTES`` is refused unread; a body over
``REQUEST_BODY_MAX_BYTES`` (by its Content-Length) is refused before it is read; a path or
query parameter holding NUL or a lone surrogate is refused before any view sees it
(``GET /memory/sessions/%00`` would otherwise reach the database).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.core.api.exception_handlers import error_body
from apps.core.api.input import has_forbidden_characters
from apps.core.exceptions import CoreErrorCode


class InputContractMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = self._refusal(request)
        return refused if refused is not None else self.get_response(request)

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        url_limit = settings.REQUEST_URL_MAX_BYTES
        if len(request.get_full_path()) > url_limit:
            return JsonResponse(
                error_body(
                    CoreErrorCode.URI_TOO_LONG,
                    f"The request's path and query string are longer than {url_limit} bytes.",
                    {"max_bytes": url_limit},
                ),
                status=414,
            )
        limit = settings.REQUEST_BODY_MAX_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return JsonResponse(
                error_body(
                    CoreErrorCode.PAYLOAD_TOO_LARGE,
                    f"The request body is larger than {limit} bytes.",
                    {"max_bytes": limit},
                ),
                status=413,
            )
        if has_forbidden_characters(request.path_info):
            return _invalid_text("path", "path")
        for name, values in request.GET.lists():
            if has_forbidden_characters(name) or any(map(has_forbidden_characters, values)):
                return _invalid_text("query", name.replace("\x00", "\\x00"))
        return None


def _invalid_text(location: str, name: str) -> JsonResponse:
    return JsonResponse(
        error_body(
            CoreErrorCode.INVALID_TEXT,
            f"The {location} parameter {name!r} holds a NUL character or an unpaired surrogate.",
            {"location": location, "field": name},
        ),
        status=422,
    )


class HeavyReadRoutingMiddleware:
    """One replica decision per request (apps/core/replica.py)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not settings.HEAVY_READ_IS_REPLICA:
            return self.get_response(request)
        from apps.core.replica import heavy_reads_routed

        with heavy_reads_routed():
            return self.get_response(request)
