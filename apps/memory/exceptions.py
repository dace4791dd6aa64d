from enum import StrEnum

from apps.core.exceptions import Conflict, NotFound, RateLimited, ValidationFailed


class MemoryErrorCode(StrEnum):
    QUOTA_EXCEEDED = "quota_exceeded"
    SESSION_QUOTA_EXCEEDED = "session_quota_exceeded"
    HISTORY_QUOTA_EXCEEDED = "history_quota_exceeded"
    INVALID_PROJECT_ID = "invalid_project_id"
    TEXT_TOO_LONG = "text_too_long"
    CONTENT_TOO_LARGE = "content_too_large"
    EXPIRES_AT_REQUIRED = "expires_at_required"
    INVALID_EXPIRES_AT = "invalid_expires_at"
    BATCH_TOO_LARGE = "batch_too_large"
    ALREADY_SUPERSEDED = "already_superseded"
    INVALID_SESSION_ID = "invalid_session_id"
    BUDGET_EXCEEDED = "budget_exceeded"
    RESERVED_SUBJECT = "reserved_subject"
    ALREADY_GRADUATED = "already_graduated"
    INVALID_MEMORY_ID = "invalid_memory_id"
    INVALID_RE_SCOPE = "invalid_re_scope"
    FORGOTTEN = "forgotten"


class MemoryNotFound(NotFound):
    pass


class SessionTurnNotFound(NotFound):
    pass


class QuotaExceeded(Conflict):
    default_code: str = MemoryErrorCode.QUOTA_EXCEEDED


class SessionQuotaExceeded(Conflict):
    """The subject's stored session turns would pass ``SESSION_QUOTA_TURNS`` or
    ``SESSION_QUOTA_BYTES``; nothing was written."""

    default_code: str = MemoryErrorCode.SESSION_QUOTA_EXCEEDED


class HistoryQuotaExceeded(Conflict):
    """A supersede would keep more than ``MEMORY_QUOTA_SUPERSEDED_ROWS`` old versions of the
    subject's memories; nothing was written."""

    default_code: str = MemoryErrorCode.HISTORY_QUOTA_EXCEEDED


class InvalidProjectId(ValidationFailed):
    default_code: str = MemoryErrorCode.INVALID_PROJECT_ID


class AlreadySuperseded(Conflict):
    default_code: str = MemoryErrorCode.ALREADY_SUPERSEDED


class BudgetExceeded(RateLimited):
    """The tenant's hourly promotion budget is spent; refused before any LLM call."""

    default_code: str = MemoryErrorCode.BUDGET_EXCEEDED


class ReservedSubject(ValidationFailed):
    """Promotion output may never be written for a reserved subject (the eval subject)."""

    default_code: str = MemoryErrorCode.RESERVED_SUBJECT


class AlreadyGraduated(Conflict):
    """The memory already graduated into an article of a different scope."""

    default_code: str = MemoryErrorCode.ALREADY_GRADUATED


class InvalidMemoryId(ValidationFailed):
    default_code: str = MemoryErrorCode.INVALID_MEMORY_ID


class InvalidReScope(ValidationFailed):
    default_code: str = MemoryErrorCode.INVALID_RE_SCOPE


class Forgotten(Conflict):
    """The memory's text is one its subject forgot (a tombstone): it is not graduated."""

    default_code: str = MemoryErrorCode.FORGOTTEN
