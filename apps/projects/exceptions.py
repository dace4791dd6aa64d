"""The projects app's stable error codes (STYLE rule 9).

NOTE: the 422/409 errors subclass ``ApplicationError`` with an explicit ``http_status`` rather
than ``ValidationFailed``/``Conflict``: those bases infer ``default_code: CoreErrorCode``, so
mypy rejects an app's own code enum on a subclass of them.
"""

from enum import StrEnum

from apps.core.exceptions import ApplicationError, NotFound


class ProjectsErrorCode(StrEnum):
    NO_IDENTIFIER = "no_identifier"
    AMBIGUOUS_RESOLUTION = "ambiguous_resolution"
    PROJECT_SLUG_TAKEN = "project_slug_taken"
    INVALID_REPO_URL = "invalid_repo_url"
    INVALID_SLUG = "invalid_slug"


class ProjectNotFound(NotFound):
    """Missing, foreign and (when resolving) archived projects all raise this same 404."""


class NoIdentifier(ApplicationError):
    http_status = 422
    default_code = ProjectsErrorCode.NO_IDENTIFIER


class InvalidRepoUrl(ApplicationError):
    http_status = 422
    default_code = ProjectsErrorCode.INVALID_REPO_URL


class InvalidSlug(ApplicationError):
    http_status = 422
    default_code = ProjectsErrorCode.INVALID_SLUG


class AmbiguousResolution(ApplicationError):
    http_status = 409
    default_code = ProjectsErrorCode.AMBIGUOUS_RESOLUTION


class ProjectSlugTaken(ApplicationError):
    http_status = 409
    default_code = ProjectsErrorCode.PROJECT_SLUG_TAKEN
