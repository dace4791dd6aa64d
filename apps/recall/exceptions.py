from enum import StrEnum

from apps.core.exceptions import ValidationFailed


class RecallErrorCode(StrEnum):
    # The query and session id are the knowledge search's own codes (apps.knowledge.exceptions).
    INVALID_RECALL_ID = "invalid_recall_id"


class InvalidRecallId(ValidationFailed):
    default_code: str = RecallErrorCode.INVALID_RECALL_ID
