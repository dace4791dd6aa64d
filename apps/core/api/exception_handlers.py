"""The single exception handler (STYLE rule 9, DESIGN §6).

Every error response, whether raised by a service, DRF, Django or an unexpected bug, leaves as
``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import logging
import math
import sys
import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import set_rollback

from apps.core.exceptions import ApplicationError, CoreErrorCode

logger = logging.getLogger("engram.errors")

# DRF's built-in validation codes say *how* a field failed; they are reported per field while
# the top-level code stays `validation_error`. Any other code on a field error is one of
# Engram's stable codes (e.g. `invalid_query`) and becomes the top-level code.
GENERIC_FIELD_CODES = frozenset(
    {
        "invalid",
        "required",
        "null",
        "blank",
        "max_length",
        "min_length",
        "max_value",
        "min_value",
        "invalid_choice",
        "not_a_list",
        "empty",
        "does_not_exist",
        "incorrect_type",
        "max_digits",
        "max_decimal_places",
        "max_whole_digits",
        "date",
        "datetime",
        "make_aware",
        "overflow",
        "not_a_dict",
        "unique",
    }
)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    # A plain str, not the code enum: every renderer (the schema view's YAML one included) can
    # write it.
    return {"error": {"code": str(code), "message": message, "details": details or {}}}


def _field_codes(codes: Any) -> list[str]:
    if isinstance(codes, dict):
        return [code for value in codes.values() for code in _field_codes(value)]
    if isinstance(codes, list):
        return [code for value in codes for code in _field_codes(value)]
    return [str(codes)]


def _first_message(detail: Any) -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = _first_message(value)
            return inner if key == "non_field_errors" else f"{key}: {inner}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def _validation_response(exc: drf_exceptions.ValidationError) -> Response:
    codes = _field_codes(exc.get_codes())
    specific = [code for code in codes if code not in GENERIC_FIELD_CODES]
    code = specific[0] if specific else CoreErrorCode.VALIDATION_ERROR
    detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    return Response(
        error_body(code, _first_message(detail), {"fields": detail}),
        status=422,
    )


_DRF_CODES: dict[type[drf_exceptions.APIException], str] = {
    drf_exceptions.ParseError: CoreErrorCode.INVALID_JSON,
    drf_exceptions.NotAuthenticated: CoreErrorCode.NOT_AUTHENTICATED,
    drf_exceptions.AuthenticationFailed: CoreErrorCode.AUTHENTICATION_FAILED,
    drf_exceptions.PermissionDenied: CoreErrorCode.PERMISSION_DENIED,
    drf_exceptions.NotFound: CoreErrorCode.NOT_FOUND,
    drf_exceptions.MethodNotAllowed: CoreErrorCode.METHOD_NOT_ALLOWED,
    drf_exceptions.UnsupportedMediaType: CoreErrorCode.UNSUPPORTED_MEDIA_TYPE,
    drf_exceptions.NotAcceptable: CoreErrorCode.NOT_ACCEPTABLE,
    drf_exceptions.Throttled: CoreErrorCode.RATE_LIMITED,
}


def _database_unavailable_body() -> tuple[dict[str, Any], dict[str, str]]:
    retry_after = settings.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS
    body = error_body(
        CoreErrorCode.DATABASE_UNAVAILABLE,
        "The database is unavailable; retry shortly.",
        {"retry_after_seconds": retry_after},
    )
    return body, {"Retry-After": str(retry_after)}


def engram_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    set_rollback()
    if isinstance(exc, OperationalError | InterfaceError):
        # Lost or refused database connections (a restart, a failover, a statement timeout):
        # nothing was committed, and the same request will work once the database is back.
        logger.warning("database unavailable: %s", type(exc).__name__)
        body, retry_headers = _database_unavailable_body()
        return Response(body, status=503, headers=retry_headers)
    if isinstance(exc, ApplicationError):
        return Response(
            error_body(exc.code, exc.message, exc.details),
            status=exc.http_status,
            headers=exc.headers or None,
        )
    if isinstance(exc, DjangoValidationError):
        exc = drf_exceptions.ValidationError(as_serializer_error(exc))
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    if isinstance(exc, DjangoPermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    if isinstance(exc, drf_exceptions.ValidationError):
        return _validation_response(exc)
    if isinstance(exc, drf_exceptions.APIException):
        code = _DRF_CODES.get(type(exc), str(exc.default_code))
        headers: dict[str, str] = {}
        details: dict[str, Any] = {}
        wait = getattr(exc, "wait", None)
        if isinstance(exc, drf_exceptions.Throttled) and wait is not None:
            # The same Retry-After and details.retry_after_seconds as every other 429.
            retry_after = max(1, math.ceil(wait))
            headers["Retry-After"] = str(retry_after)
            details["retry_after_seconds"] = retry_after
        if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
            headers["WWW-Authenticate"] = "Bearer"
        return Response(
            error_body(code, str(exc.detail), details),
            status=exc.status_code,
            headers=headers or None,
        )
    return _internal_error_response(exc)


def _internal_error_response(exc: BaseException) -> Response:
    error_id = uuid.uuid4().hex
    logger.exception("unhandled error error_id=%s", error_id, exc_info=exc)
    return Response(
        error_body(CoreErrorCode.INTERNAL_ERROR, "Internal server error.", {"error_id": error_id}),
        status=500,
    )


# Django-level handlers, for requests that never reach a DRF view (unknown URLs, crashes in
# middleware). They speak the same envelope.


def bad_request_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body(CoreErrorCode.BAD_REQUEST, "Bad request."), status=400)


def permission_denied_view(
    request: HttpRequest, exception: Exception | None = None
) -> JsonResponse:
    return JsonResponse(
        error_body(CoreErrorCode.PERMISSION_DENIED, "Permission denied."), status=403
    )


def not_found_view(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body(CoreErrorCode.NOT_FOUND, "Not found."), status=404)


def server_error_view(request: HttpRequest) -> JsonResponse:
    # Django calls this from inside its exception handling, so the error is still current.
    if isinstance(sys.exc_info()[1], OperationalError | InterfaceError):
        body, headers = _database_unavailable_body()
        return JsonResponse(body, status=503, headers=headers)
    error_id = uuid.uuid4().hex
    logger.error("unhandled error outside the API error_id=%s", error_id)
    return JsonResponse(
        error_body(CoreErrorCode.INTERNAL_ERROR, "Internal server error.", {"error_id": error_id}),
        status=500,
    )
