from enum import StrEnum

from rest_framework.exceptions import Throttled

from apps.core.exceptions import ApplicationError, Conflict, Locked, NotFound, ValidationFailed


class TenancyErrorCode(StrEnum):
    SUBJECT_ID_UNRESOLVABLE = "subject_id_unresolvable"
    IMPERSONATION_TENANT_REQUIRED = "impersonation_tenant_required"
    TENANT_HALTED = "tenant_halted"
    TENANT_EXISTS = "tenant_exists"
    INVALID_PROVIDER_CONFIG = "invalid_provider_config"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    IDEMPOTENCY_KEY_IN_PROGRESS = "idempotency_key_in_progress"
    AUTHENTICATION_RATE_LIMITED = "authentication_rate_limited"


class SubjectUnresolvable(ValidationFailed):
    default_code: str = TenancyErrorCode.SUBJECT_ID_UNRESOLVABLE


class ImpersonationTenantRequired(ValidationFailed):
    default_code: str = TenancyErrorCode.IMPERSONATION_TENANT_REQUIRED


class TenantHalted(Locked):
    default_code: str = TenancyErrorCode.TENANT_HALTED


class TenantNotFound(NotFound):
    pass


class InvalidProviderConfig(ValidationFailed):
    default_code: str = TenancyErrorCode.INVALID_PROVIDER_CONFIG


class TenantExists(ApplicationError):
    http_status = 409
    default_code: str = TenancyErrorCode.TENANT_EXISTS


class InvalidIdempotencyKey(ValidationFailed):
    default_code: str = TenancyErrorCode.INVALID_IDEMPOTENCY_KEY


class IdempotencyKeyReused(ValidationFailed):
    """The key already answered a different request (another body, path or method)."""

    default_code: str = TenancyErrorCode.IDEMPOTENCY_KEY_REUSED


class IdempotencyKeyInProgress(Conflict):
    """The key's first request has not answered yet; retry after ``Retry-After``."""

    default_code: str = TenancyErrorCode.IDEMPOTENCY_KEY_IN_PROGRESS


class AuthenticationRateLimited(Throttled):
    """Too many failed authentications from one source address (429 with ``Retry-After``).

    A DRF exception rather than an :class:`ApplicationError` because authentication raises it:
    DRF marks the request unauthenticated only for its own exceptions.
    """

    default_code = TenancyErrorCode.AUTHENTICATION_RATE_LIMITED
    default_detail = "Too many failed authentications from this address."
