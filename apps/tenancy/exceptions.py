from enum import StrEnum

from apps.core.exceptions import ApplicationError, Locked, NotFound, ValidationFailed


class TenancyErrorCode(StrEnum):
    SUBJECT_ID_UNRESOLVABLE = "subject_id_unresolvable"
    IMPERSONATION_TENANT_REQUIRED = "impersonation_tenant_required"
    TENANT_HALTED = "tenant_halted"
    TENANT_EXISTS = "tenant_exists"
    INVALID_PROVIDER_CONFIG = "invalid_provider_config"


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
