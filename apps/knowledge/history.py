"""Which articles a session was already shown: the containment stage's memory.

Kept in the shared cache, keyed ``(tenant_id, subject_id, session_id, article_id)``: both
server-derived halves of the caller's scope come before the client's token, so a token that
another tenant, or another agent of the same tenant, happens to pick can never suppress rows
from your results. It is best effort by design: an eviction or a node-local cache simply
re-surfaces an article, which is the behaviour without history.

Forgetting and erasure drop a subject's history (:func:`history_forget_subject`,
:func:`history_forget_tenant`) by moving its generation on: every key carries the tenant's and
the subject's generation, so entries written before are never read again and expire with
their TTL. That works on every cache backend, where deleting by key pattern does not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Protocol

from django.core.cache import cache

KEY_PREFIX = "knowledge:shown"
GENERATION_PREFIX = "knowledge:shown-generation"
#: Generations outlive any history entry (the history TTL is hours at most).
GENERATION_TTL_SECONDS = 30 * 24 * 3600


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
        subject = _subject_digest(subject_id)
        tenant_key, subject_key = _generation_keys(tenant_id, subject_id)
        generations = cache.get_many([tenant_key, subject_key])
        generation = f"{generations.get(tenant_key, 0)}.{generations.get(subject_key, 0)}"
        self._prefix = f"{KEY_PREFIX}:{tenant_id}:{subject}:{generation}:{token}"
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


def _subject_digest(subject_id: str) -> str:
    return hashlib.sha256(subject_id.encode("utf-8")).hexdigest()[:32]


def _generation_keys(tenant_id: object, subject_id: str) -> tuple[str, str]:
    return (
        f"{GENERATION_PREFIX}:{tenant_id}",
        f"{GENERATION_PREFIX}:{tenant_id}:{_subject_digest(subject_id)}",
    )


def _bump(key: str) -> None:
    # add() then incr() is atomic on Redis; a lost race still leaves a new generation.
    cache.add(key, 0, timeout=GENERATION_TTL_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=GENERATION_TTL_SECONDS)


def history_forget_subject(*, tenant_id: object, subject_id: str) -> None:
    """Make every shown-history entry of one subject unreadable (forget, subject erasure)."""
    _bump(_generation_keys(tenant_id, subject_id)[1])


def history_forget_tenant(*, tenant_id: object) -> None:
    """Make every shown-history entry of a tenant unreadable (tenant erasure)."""
    _bump(_generation_keys(tenant_id, "")[0])
