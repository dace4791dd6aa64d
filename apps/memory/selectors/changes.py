"""The memories a change detector compares a new one with (``services/changes.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from apps.core.db.routers import PRIMARY
from apps.memory.models import MEMORY_TEXT_SEARCH_CONFIG, Memory
from apps.tenancy.models import Tenant

#: What the detector reads of a candidate whose claims conflict: its text and time, and what a
#: retire or a flag reads and changes (``services/validity.py``: a version that replaced others
#: quotes them in its derived context).
CANDIDATE_FIELDS = (
    "id",
    "tenant_id",
    "subject_id",
    "text",
    "context",
    "derived_context",
    "metadata",
    "valid_from",
    "source",
    "supersedes",
    "supersede_reason",
    "conflicts_with",
    "context_thread",
    "thread_seq",
    "project_id",
    "superseded_by_id",
)

# The subject's postings of the words (stemmed like the keyword index), in the memory's text.
# Each word as the text search configuration stems it, and as given: the change rules pass
# their own stems ("respons" of "responses"), which the configuration would stem again
# ("respon") past the lexeme the text holds ("respons").
_HOLDING_WORDS = """
SELECT term.memory_id FROM memory_search_term AS term
 WHERE term.tenant_id = %s AND term.subject_id = %s AND term.in_text > 0
   AND term.lexeme = ANY(
       tsvector_to_array(to_tsvector(%s::regconfig, %s))
       || regexp_split_to_array(lower(%s), '\\s+'))
"""


def _holding_words(*, tenant: Tenant, subject_id: str, words: str) -> QuerySet[Memory]:
    """The subject's memories (live or not, any partition) whose text holds any of ``words``,
    found through the postings; on the primary, so a writer sees its own transaction's rows."""
    return Memory.objects.using(PRIMARY).filter(
        tenant=tenant,
        subject_id=subject_id,
        # Constant SQL, values bound.
        id__in=RawSQL(  # noqa: S611
            _HOLDING_WORDS, [tenant.pk, subject_id, MEMORY_TEXT_SEARCH_CONFIG, words, words]
        ),
    )


class ChangeCandidate(NamedTuple):
    """What the detector compares of a candidate: its text, and when it became true. The full
    row is read (:func:`memory_live_candidates`) only for a candidate whose claims conflict."""

    pk: uuid.UUID
    text: str
    valid_from: datetime


def memory_change_candidates(
    *,
    tenant: Tenant,
    subject_id: str,
    project_id: uuid.UUID | None,
    words: str,
    exclude: Sequence[uuid.UUID],
    limit: int,
) -> list[ChangeCandidate]:
    """The subject's live memories in exactly ``project_id``'s partition whose text holds any
    of ``words``, the most recently valid first, at most ``limit``; read on the primary, so a
    writer sees the rows of its own transaction. Tuples, not model instances: most of them
    state nothing the new memory changes, and building a row costs more than reading its
    claims."""
    rows = _holding_words(tenant=tenant, subject_id=subject_id, words=words)
    rows = rows.filter(superseded_by__isnull=True)
    rows = (
        rows.filter(project__isnull=True)
        if project_id is None
        else rows.filter(project_id=project_id)
    )
    if exclude:
        rows = rows.exclude(pk__in=list(exclude))
    ordered = rows.order_by("-valid_from", "id").values_list("pk", "text", "valid_from")
    return [ChangeCandidate(*row) for row in ordered[:limit]]


def memory_live_candidates(
    *, tenant: Tenant, subject_id: str, ids: Sequence[uuid.UUID]
) -> list[Memory]:
    """Those of ``ids`` that are the subject's live memories, read as the detector reads a
    candidate, on the primary (inside the write's transaction, what holds now)."""
    rows = Memory.objects.using(PRIMARY).filter(
        tenant=tenant, subject_id=subject_id, superseded_by__isnull=True, pk__in=list(ids)
    )
    return list(rows.only(*CANDIDATE_FIELDS).order_by("-valid_from", "id"))


def memory_texts(
    *, tenant: Tenant, subject_id: str, ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, str]:
    """The texts of some of the subject's memories (live or not), by id."""
    rows = Memory.objects.using(PRIMARY).filter(
        tenant=tenant, subject_id=subject_id, pk__in=list(ids)
    )
    return dict(rows.values_list("pk", "text"))


#: How many of the subject's memories naming a candidate's names are read for introductions.
NAMING_TEXTS_LIMIT = 200


def memory_texts_naming(*, tenant: Tenant, subject_id: str, names: Sequence[str]) -> list[str]:
    """The texts of the subject's memories outside any project (where promotion writes; live
    or not) that hold any of ``names`` as a word, the earliest first, at most
    :data:`NAMING_TEXTS_LIMIT`: where an earlier statement may have introduced a name a new
    one mentions alone (:mod:`apps.extraction.referents`)."""
    if not names:
        return []
    rows = _holding_words(tenant=tenant, subject_id=subject_id, words=" ".join(names))
    rows = rows.filter(project__isnull=True).order_by("valid_from", "id")
    earliest = rows.values_list("text", flat=True)
    return list(earliest[:NAMING_TEXTS_LIMIT])
