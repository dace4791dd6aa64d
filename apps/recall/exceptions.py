from enum import StrEnum

from apps.core.exceptions import ValidationFailed


class RecallErrorCode(StrEnum):
    INVALID_QUERY = "invalid_query"
    QUERY_TOO_LONG = "query_too_long"
    INVALID_SESSION_ID = "invalid_session_id"
    INVALID_RECALL_ID = "invalid_recall_id"


class InvalidRecallId(ValidationFailed):
    default_code: str = RecallErrorCode.INVALID_RECALL_ID
