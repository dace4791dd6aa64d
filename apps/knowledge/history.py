"""Which articles a session was already shown: the containment stage's memory.

Kept in the shared cache, keyed ``(tenant_id, subject_id, session_id, article_id)``: both
server-derived halves of the caller's scope come before the client's token, so a token that
another tenant, or another agent of the same tenant, happens to pick can never suppress rows
from your results. It is best effort by design: an eviction or a node-local cache simply
re-surfaces an article, which is the behaviour without history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Protocol

from django.core.cache import cache

KEY_PREFIX = "knowledge:shown"


class ShownHistory(Protocol):
    """What :func:`apps.knowledge.selectors.knowledge_search` needs from a history."""

    def seen(self, article_ids: Iterable[object]) -> set[str]:
        """The subset of ``article_ids`` (as strings) this session was already shown."""
        ...

    def mark(self, article_ids: Iterable[object]) -> None:
        """Record that ``article_ids`` were shown to this session now."""
        ...


class RecallHistory:
    """A cache-backed :class:`ShownHistory` for one (tenant, subject, session)."""

    def __init__(self, tenant_id: object, subject_id: str, session_id: str, ttl: int) -> None:
        # The session token is client-chosen and arbitrary: hash it so any byte string makes
        # a safe cache key, and so keys never carry the raw token.
        token = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        subject = hashlib.sha256(subject_id.encode("utf-8")).hexdigest()[:32]
        self._prefix = f"{KEY_PREFIX}:{tenant_id}:{subject}:{token}"
        self._ttl = ttl

    def _key(self, article_id: object) -> str:
        return f"{self._prefix}:{article_id}"

    def seen(self, article_ids: Iterable[object]) -> set[str]:
        ids = [str(article_id) for article_id in article_ids]
        if not ids:
            return set()
        found = cache.get_many([self._key(article_id) for article_id in ids])
        return {article_id for article_id in ids if self._key(article_id) in found}

    def mark(self, article_ids: Iterable[object]) -> None:
        entries = {self._key(str(article_id)): 1 for article_id in article_ids}
        if entries:
            cache.set_many(entries, timeout=self._ttl)
