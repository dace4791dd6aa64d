"""What a memory's valid time records when a fact changes (helpers, inside the caller's
transaction with the subject's scope lock held).

* :func:`memory_retire`: a newer row replaces an older one. The old row's validity ends where
  the new one's begins (never before its own start: a correction, whose new version is valid
  from the old one's start, leaves an empty interval, true at no time), it leaves recall and
  list (``superseded_by``), and the new row records it in ``supersedes`` with the reason.
* :func:`memory_flag_conflict`: two live rows state different values and nothing says which
  is current: both keep their validity and name each other in ``conflicts_with``.
* :func:`memory_drop_references`: rows that are gone (forgotten) or retired leave the
  ``supersedes`` / ``conflicts_with`` of the rows that named them, so no id outlives its row.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from django.db import connections

from apps.core.db.routers import PRIMARY
from apps.memory.models import Memory
from apps.memory.selectors import memory_texts
from apps.memory.services.derived_context import (
    compose_replaced,
    quotes_replaced,
    refresh_threads,
)
from apps.tenancy.models import Tenant

#: The fields :func:`memory_retire` reads of the old row (a caller may load only these).
RETIRE_FIELDS = (
    "pk",
    "valid_from",
    "conflicts_with",
    "context_thread",
    "thread_seq",
    "project_id",
)


def memory_retire(
    *, tenant: Tenant, subject_id: str, old: Memory, new: Memory, reason: str, now: datetime
) -> None:
    """Make the saved row ``new`` the current version of ``old`` (see the module docstring).

    The old row, now history, quotes nobody (``derived_context``), and its session neighbours
    are re-derived without it. A live row that was in conflict with it no longer is."""
    valid_to = max(new.valid_from, old.valid_from)
    Memory.objects.filter(pk=old.pk).update(
        superseded_by=new, superseded_at=now, derived_context="", valid_to=valid_to
    )
    old.superseded_by_id, old.superseded_at, old.valid_to = new.pk, now, valid_to
    if old.pk not in new.supersedes or new.supersede_reason != reason:
        new.supersedes = [*(pk for pk in new.supersedes if pk != old.pk), old.pk]
        new.supersede_reason = reason
        Memory.objects.filter(pk=new.pk).update(supersedes=new.supersedes, supersede_reason=reason)
    memory_quote_replaced(tenant=tenant, subject_id=subject_id, memories=[new])
    if old.conflicts_with:
        memory_drop_references(
            tenant=tenant, subject_id=subject_id, ids=[old.pk], conflicts_only=True
        )
    if old.context_thread and old.thread_seq is not None:
        refresh_threads(
            tenant=tenant,
            subject_id=subject_id,
            around={(old.project_id, old.context_thread): [old.thread_seq]},
        )


def memory_quote_replaced(*, tenant: Tenant, subject_id: str, memories: Sequence[Memory]) -> None:
    """Re-derive the context of ``memories`` that quote what they replaced
    (:func:`~apps.memory.services.derived_context.compose_replaced`) from their ``supersedes``
    as it stands: after a retire adds to it, and after a forget takes from it (the forgotten
    text leaves the keyword index with its row)."""
    quoting = [memory for memory in memories if quotes_replaced(memory)]
    ids = [pk for memory in quoting for pk in memory.supersedes]
    texts = memory_texts(tenant=tenant, subject_id=subject_id, ids=ids) if ids else {}
    changed = []
    for memory in quoting:
        derived = compose_replaced(memory, [texts[pk] for pk in memory.supersedes if pk in texts])
        if derived != memory.derived_context:
            memory.derived_context = derived
            changed.append(memory)
    Memory.objects.bulk_update(changed, ["derived_context"])


_APPEND_CONFLICT = """
UPDATE memory_memory SET conflicts_with = array_append(conflicts_with, %s)
 WHERE tenant_id = %s AND subject_id = %s AND id = %s AND NOT (%s = ANY(conflicts_with))
"""


def memory_flag_conflict(*, tenant: Tenant, subject_id: str, first: Memory, second: Memory) -> None:
    """Name each of two live rows in the other's ``conflicts_with`` (idempotent)."""
    with connections[PRIMARY].cursor() as cursor:
        for row, other in ((first, second), (second, first)):
            cursor.execute(_APPEND_CONFLICT, [other.pk, tenant.pk, subject_id, row.pk, other.pk])
            if other.pk not in row.conflicts_with:
                row.conflicts_with = [*row.conflicts_with, other.pk]


_DROP = """
UPDATE memory_memory SET
       supersedes = ARRAY(SELECT v FROM unnest(supersedes) AS v WHERE v <> ALL(%(ids)s::uuid[])),
       conflicts_with = ARRAY(
           SELECT v FROM unnest(conflicts_with) AS v WHERE v <> ALL(%(ids)s::uuid[]))
 WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
   AND (supersedes && %(ids)s::uuid[] OR conflicts_with && %(ids)s::uuid[])
"""

_DROP_CONFLICTS = """
UPDATE memory_memory SET conflicts_with = ARRAY(
           SELECT v FROM unnest(conflicts_with) AS v WHERE v <> ALL(%(ids)s::uuid[]))
 WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
   AND superseded_by_id IS NULL AND conflicts_with && %(ids)s::uuid[]
"""


def memory_drop_references(
    *, tenant: Tenant, subject_id: str, ids: Sequence[uuid.UUID], conflicts_only: bool = False
) -> None:
    """Remove ``ids`` from the subject's rows' ``supersedes`` and ``conflicts_with`` (with
    ``conflicts_only``: from the ``conflicts_with`` of live rows only). One statement, within
    the subject's own rows: a reference never crosses subjects."""
    if not ids:
        return
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            _DROP_CONFLICTS if conflicts_only else _DROP,
            {"ids": list(ids), "tenant": tenant.pk, "subject": subject_id},
        )
