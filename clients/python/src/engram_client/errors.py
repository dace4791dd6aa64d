"""Errors: every API error is an :class:`EngramError` carrying the API's stable ``code``.

The subclass follows the HTTP status, so ``except NotFoundError`` reads naturally, while
``error.code`` (``quota_exceeded``, ``not_surfaced``, ``idempotency_key_reused`` …) is the
precise reason; docs/ in the Engram repository list the codes per endpoint.
"""

from __future__ import annotations

from typing import Any


class EngramError(Exception):
    """An error answered by Engram (``status`` set) or met on the way there (``status`` None)."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.message = message
        self.code = code
        self.status = status
        self.details: dict[str, Any] = details or {}


class EngramConnectionError(EngramError):
    """Engram could not be reached (or dropped the connection) on every attempt."""


class BadRequestError(EngramError):
    """400."""


class AuthenticationError(EngramError):
    """401: a missing, malformed, unknown or revoked API key."""


class PermissionDeniedError(EngramError):
    """403: the key's role may not call this endpoint."""


class NotFoundError(EngramError):
    """404: missing, or not yours (Engram does not tell the two apart)."""


class ConflictError(EngramError):
    """409: e.g. ``quota_exceeded``, ``title_taken``, ``version_conflict``."""


class InvalidRequestError(EngramError):
    """422: the request was refused before anything was written (``details.fields`` says why)."""


class LockedError(EngramError):
    """423: the tenant is under a custody halt."""


class RateLimitedError(EngramError):
    """429: still limited after the client's retries; ``retry_after`` is the server's hint."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(EngramError):
    """5xx."""


class ServiceUnavailableError(ServerError):
    """503: e.g. ``gate_unavailable`` when embeddings are down; retry later."""


STATUS_ERRORS: dict[int, type[EngramError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidRequestError,
    423: LockedError,
    429: RateLimitedError,
    503: ServiceUnavailableError,
}


def error_for_status(status: int) -> type[EngramError]:
    if status in STATUS_ERRORS:
        return STATUS_ERRORS[status]
    return ServerError if status >= 500 else EngramError
