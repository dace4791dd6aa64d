"""The query contract every read by meaning shares: a non-blank string (422 ``invalid_query``)
of at most the reader's ``max_chars`` characters (422 ``query_too_long``).

Each reader (memory recall, knowledge search, merged recall) owns its bound and applies this
once: its selector validates, and the HTTP layer runs the same validator on the request body
(through ``QueryTextField``) so a bad query is refused with the body's other fields, before
anything is embedded. The validated value is a :class:`QueryText`, which the selector accepts
without checking it again.
"""

from __future__ import annotations

from apps.core.exceptions import CoreErrorCode, ValidationFailed


class InvalidQuery(ValidationFailed):
    default_code: str = CoreErrorCode.INVALID_QUERY


class QueryTooLong(ValidationFailed):
    default_code: str = CoreErrorCode.QUERY_TOO_LONG


class QueryText(str):
    """A query that met the contract at some reader's bound."""

    __slots__ = ()


def validate_query_text(query: object, *, max_chars: int) -> QueryText:
    """``query`` as a :class:`QueryText`, or the contract's 422."""
    if isinstance(query, QueryText) and len(query) <= max_chars:
        return query
    if not isinstance(query, str) or not query.strip():
        raise InvalidQuery("query must be a non-blank string.")
    if len(query) > max_chars:
        raise QueryTooLong(
            f"query is longer than {max_chars} characters.", details={"max_chars": max_chars}
        )
    return QueryText(query)
