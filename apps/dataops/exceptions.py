from enum import StrEnum

from apps.core.exceptions import Conflict, PermissionDenied, ServiceUnavailable, ValidationFailed


class DataOpsErrorCode(StrEnum):
    # Export and import.
    INVALID_EXPORT = "invalid_export"
    DIMENSION_MISMATCH = "dimension_mismatch"
    ID_COLLISION = "id_collision"
    MISSING_PROJECTS = "missing_projects"
    IMPORT_CONFLICT = "import_conflict"
    # Erasure.
    SUBJECT_REQUIRED = "subject_required"
    ERASE_SUBJECT_FORBIDDEN = "erase_subject_forbidden"
    # Re-embedding.
    EMBEDDINGS_UNAVAILABLE = "embeddings_unavailable"
    REEMBED_RUNNING = "reembed_running"


class ExportFileInvalid(ValidationFailed):
    """A line of the file is not a valid record; ``details["line"]`` says which."""

    default_code: str = DataOpsErrorCode.INVALID_EXPORT

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}", details={"line": line})
        self.line = line


class DimensionMismatch(ValidationFailed):
    default_code: str = DataOpsErrorCode.DIMENSION_MISMATCH


class MissingProjects(ValidationFailed):
    default_code: str = DataOpsErrorCode.MISSING_PROJECTS


class IdCollision(Conflict):
    """An id in the file belongs to another tenant: ids are global, tenants never share."""

    default_code: str = DataOpsErrorCode.ID_COLLISION


class ImportConflict(Conflict):
    """The database refused the import (a constraint the pre-checks did not foresee)."""

    default_code: str = DataOpsErrorCode.IMPORT_CONFLICT


class EraseSubjectRequired(ValidationFailed):
    default_code: str = DataOpsErrorCode.SUBJECT_REQUIRED


class EraseSubjectForbidden(PermissionDenied):
    default_code: str = DataOpsErrorCode.ERASE_SUBJECT_FORBIDDEN


class ReembedInterrupted(ServiceUnavailable):
    """The provider failed mid-run; what was done is kept and a re-run resumes."""

    default_code: str = DataOpsErrorCode.EMBEDDINGS_UNAVAILABLE


class ReembedAlreadyRunning(Conflict):
    default_code: str = DataOpsErrorCode.REEMBED_RUNNING
