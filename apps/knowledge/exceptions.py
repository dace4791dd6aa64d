"""The knowledge app's stable error codes (STYLE rule 9).

NOTE: most errors subclass ``ApplicationError`` with an explicit ``http_status`` rather than
``ValidationFailed``/``Conflict``, as in ``apps.projects``: those bases pin ``default_code`` to
``CoreErrorCode`` for the type checker. ``GateUnavailable`` is the exception: other apps catch
it as a ``ServiceUnavailable``, so it keeps that base and re-annotates the code.
"""

from __future__ import annotations

from enum import StrEnum

from apps.core.exceptions import ApplicationError, NotFound, ServiceUnavailable


class KnowledgeErrorCode(StrEnum):
    GATE_UNAVAILABLE = "gate_unavailable"
    TITLE_TAKEN = "title_taken"
    VERSION_CONFLICT = "version_conflict"
    ARTICLE_ARCHIVED = "article_archived"
    NOT_ARTICLE_OWNER = "not_article_owner"
    INVALID_ARTICLE = "invalid_article"
    INVALID_PROJECT_ID = "invalid_project_id"
    INVALID_SESSION_ID = "invalid_session_id"
    INVALID_SEARCH_ID = "invalid_search_id"
    INVALID_ARTICLE_IDS = "invalid_article_ids"
    TOO_MANY_ARTICLE_IDS = "too_many_article_ids"
    NOT_SURFACED = "not_surfaced"
    ALIAS_TAG_RESERVED = "alias_tag_reserved"
    # An edit refused by the novelty gate: the gate's own verdicts for "already known".
    DUPLICATE = "duplicate"
    DEDUPLICATED = "deduplicated"
    ARTICLE_QUOTA_EXCEEDED = "article_quota_exceeded"


class ArticleNotFound(NotFound):
    """Missing, another tenant's, and invisible to this viewer are all this same 404."""


class GateUnavailable(ServiceUnavailable):
    """The novelty gate fell open (embeddings unavailable): nothing was written; retry later."""

    default_code: str = KnowledgeErrorCode.GATE_UNAVAILABLE


class TitleTaken(ApplicationError):
    http_status = 409
    default_code = KnowledgeErrorCode.TITLE_TAKEN


class VersionConflict(ApplicationError):
    http_status = 409
    default_code = KnowledgeErrorCode.VERSION_CONFLICT


class ArticleArchived(ApplicationError):
    http_status = 409
    default_code = KnowledgeErrorCode.ARTICLE_ARCHIVED


class NotArticleOwner(ApplicationError):
    http_status = 403
    default_code = KnowledgeErrorCode.NOT_ARTICLE_OWNER


class InvalidArticle(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.INVALID_ARTICLE


class InvalidProjectId(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.INVALID_PROJECT_ID


class InvalidSessionId(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.INVALID_SESSION_ID


class InvalidSearchId(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.INVALID_SEARCH_ID


class InvalidArticleIds(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.INVALID_ARTICLE_IDS


class TooManyArticleIds(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.TOO_MANY_ARTICLE_IDS


class NotSurfaced(ApplicationError):
    http_status = 422
    default_code = KnowledgeErrorCode.NOT_SURFACED


class AliasTagReserved(ApplicationError):
    """An agent tried to add an ``alias:`` tag: only curators name the curated answer."""

    http_status = 403
    default_code = KnowledgeErrorCode.ALIAS_TAG_RESERVED


class DuplicateEdit(ApplicationError):
    """An edit would make an article repeat one the editor can already read: 409 with the
    gate's verdict as its code (``duplicate``: the same body; ``deduplicated``: a paraphrase
    at or above ``KNOWLEDGE_DEDUPE_THRESHOLD``) and the existing article in ``details``."""

    http_status = 409
    default_code = KnowledgeErrorCode.DUPLICATE


class ArticleQuotaExceeded(ApplicationError):
    """The tenant or the author already stores as many articles as its quota allows; nothing
    was written."""

    http_status = 409
    default_code = KnowledgeErrorCode.ARTICLE_QUOTA_EXCEEDED
