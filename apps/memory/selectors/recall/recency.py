"""Of two live hits that say nearly the same thing, the later fact first.

The change detector retires a stale memory only when its rules read the change ("works at
Acme" → "works at Globex"). Where they do not ("is a big fan of pottery" → "took a break from
pottery"), both stay live and the question's words decide which ranks first: often the older,
which has had longer to be restated. Two live hits whose vectors are at least
``MEMORY_RECALL_SAME_FACT_SIMILARITY`` apart in cosine are taken to speak of one thing, and
the one that became true later is moved above the other, under the rule ``prefer_current``
applies to two contested memories (a promoted memory never above an explicit one).
"""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Sequence

from django.conf import settings

from apps.extraction.change_cues import states_a_change
from apps.memory.models import Memory
from apps.memory.selectors.recall.results import RecallHit
from apps.memory.selectors.recall.scope import fetch_values, quote, recall_scope
from apps.tenancy.models import Tenant

_WORD = re.compile(r"[a-z]+")


class LaterFirst(enum.Enum):
    """Which pairs of hits a question puts the later of first."""

    #: Any two that say nearly the same thing.
    SAME_FACT = "same_fact"
    #: Only those whose later one says that something changed.
    CHANGED = "changed"


def _named(text: str, names: Sequence[str]) -> frozenset[str]:
    """Which of ``names`` the text speaks of."""
    words = set(_WORD.findall(text.lower()))
    return frozenset(name.lower() for name in names if name.lower() in words)


def same_fact_pairs(
    *,
    tenant: Tenant,
    subject_id: str,
    hits: Sequence[RecallHit],
    names: Sequence[str] = (),
    changed_only: bool = False,
) -> set[frozenset[uuid.UUID]]:
    """The pairs among the first ``MEMORY_RECALL_SAME_FACT_HEAD`` of ``hits`` (live and
    embedded) whose vectors' cosine similarity is at least ``MEMORY_RECALL_SAME_FACT_SIMILARITY``
    (above 1: none) that, when the question names anyone (``names``), speak of one of them
    both: "Bob works at Globex" is no later value of where Alice works, however alike the
    sentences. With ``changed_only``, only pairs whose later memory says that something
    changed (:func:`~apps.extraction.change_cues.states_a_change`). Only the head:
    re-ordering within it never changes which memories are in it."""
    threshold = settings.MEMORY_RECALL_SAME_FACT_SIMILARITY
    head = {
        hit.memory.pk: hit.memory
        for hit in hits[: settings.MEMORY_RECALL_SAME_FACT_HEAD]
        if hit.memory.superseded_by_id is None and hit.memory.embedded_at is not None
    }
    named = {pk: _named(memory.text, names) for pk, memory in head.items()}
    ids = [pk for pk, spoken in named.items() if spoken or not names]
    if changed_only and not any(states_a_change(head[pk].text) for pk in ids):
        return set()
    if threshold > 1 or len(ids) < 2:
        return set()
    pairs = _similar_pairs(tenant=tenant, subject_id=subject_id, ids=ids, threshold=threshold)
    return {
        frozenset((first, second))
        for first, second in pairs
        if (not names or named[first] & named[second])
        and (not changed_only or _later_says_changed(head[first], head[second]))
    }


def _similar_pairs(
    *, tenant: Tenant, subject_id: str, ids: Sequence[uuid.UUID], threshold: float
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """The pairs of ``ids`` (in the subject's guarded scope) whose vectors' cosine similarity
    is at least ``threshold``, compared by the database: only the pairs come back, not the
    vectors (parsing ten of them in Python cost more than the comparison)."""
    scope = recall_scope(
        tenant_id=tenant.pk, subject_id=subject_id, project_id=None, include_superseded=False
    )
    table, pk = scope.table, quote(scope.using, "id")
    embedding = quote(scope.using, "embedding")
    sql = (
        f"WITH head AS (SELECT {table}.{pk} AS id, {table}.{embedding} AS embedding "  # noqa: S608
        f"FROM {table} WHERE {table}.{pk} = ANY(%s) AND {scope.where}) "
        "SELECT a.id, b.id FROM head a JOIN head b ON a.id < b.id "
        "WHERE (a.embedding <=> b.embedding) <= %s"
    )
    return [
        (first, second)
        for first, second in fetch_values(scope, sql, [list(ids), *scope.params, 1.0 - threshold])
    ]


def _later_says_changed(first: Memory, second: Memory) -> bool:
    """Whether the one of two memories that became true later says that something changed."""
    if first.valid_from == second.valid_from:
        return False
    later = first if first.valid_from > second.valid_from else second
    return states_a_change(later.text)
