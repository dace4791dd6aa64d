"""The one error hierarchy (STYLE rule 9). Every error a client sees is one of these."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class CoreErrorCode(StrEnum):
    VALIDATION_ERROR = "validation_error"
    INVALID_FILTER = "invalid_filter"
    INVALID_JSON = "invalid_json"
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    PERMISSION_DENIED = "permission_denied"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    NOT_ACCEPTABLE = "not_acceptable"
    RATE_LIMITED = "rate_limited"
    TOO_MANY_REQUESTS_IN_FLIGHT = "too_many_requests_in_flight"
    CONFLICT = "conflict"
    SERVICE_UNAVAILABLE = "service_unavailable"
    DATABASE_UNAVAILABLE = "database_unavailable"
    BAD_REQUEST = "bad_request"
    INTERNAL_ERROR = "internal_error"
    INVALID_TEXT = "invalid_text"
    JSON_TOO_DEEP = "json_too_deep"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    URI_TOO_LONG = "uri_too_long"
    METADATA_TOO_LARGE = "metadata_too_large"
    INVALID_PROJECT_ID = "invalid_project_id"
    INVALID_QUERY = "invalid_query"
    QUERY_TOO_LONG = "query_too_long"


class ApplicationError(Exception):
    """A domain error with a stable code; the exception handler renders it."""

    http_status: int = 400
    default_code: str = CoreErrorCode.BAD_REQUEST

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        http_status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = str(code or self.default_code)
        self.details = details or {}
        self.headers = headers or {}
        if http_status is not None:
            self.http_status = http_status


class ValidationFailed(ApplicationError):
    http_status = 422
    default_code: str = CoreErrorCode.VALIDATION_ERROR


class NotFound(ApplicationError):
    """Missing and belongs-to-someone-else are the same error (STYLE rule 4)."""

    http_status = 404
    default_code: str = CoreErrorCode.NOT_FOUND

    def __init__(self, message: str = "Not found.", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)


class PermissionDenied(ApplicationError):
    http_status = 403
    default_code: str = CoreErrorCode.PERMISSION_DENIED


class Conflict(ApplicationError):
    http_status = 409
    default_code: str = CoreErrorCode.CONFLICT


class Locked(ApplicationError):
    http_status = 423
    default_code: str = "locked"


class PayloadTooLarge(ApplicationError):
    http_status = 413
    default_code: str = CoreErrorCode.PAYLOAD_TOO_LARGE


class RateLimited(ApplicationError):
    http_status = 429
    default_code: str = CoreErrorCode.RATE_LIMITED

    def __init__(self, message: str, *, retry_after_seconds: int, **kwargs: Any) -> None:
        headers = {"Retry-After": str(max(1, retry_after_seconds))}
        details = {"retry_after_seconds": max(1, retry_after_seconds), **kwargs.pop("details", {})}
        super().__init__(message, headers=headers, details=details, **kwargs)


class ServiceUnavailable(ApplicationError):
    http_status = 503
    default_code: str = CoreErrorCode.SERVICE_UNAVAILABLE
