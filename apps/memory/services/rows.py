"""The one write path of a long-term memory row: build it, admit it under the subject's quotas
(live rows; superseded rows when it replaces one), insert it. The explicit write and supersede
(``long_term``), promotion and the tenant import (``apps.dataops``) all write their rows
through here.

Every caller holds the subject's scope lock (``lock_memory_scope``) across admission and
insert, so the quota is race-free; a restore (the import) is the one writer that skips the
quota, because a restore must not drop rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from apps.core.db.copies import copy_instances
from apps.core.db.inserts import insert_instances
from apps.core.db.on_commit import after_commit
from apps.core.db.routers import PRIMARY
from apps.core.telemetry import emit
from apps.memory.exceptions import HistoryQuotaExceeded, QuotaExceeded
from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_scope_admission
from apps.memory.services.changes import memory_detect_changes
from apps.memory.services.derived_context import thread_new_memories
from apps.memory.services.embedding import memory_wake_embeddings
from apps.memory.services.tombstones import tombstone_clear
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.models import Tenant

#: Rows per COPY statement of a restore. Each embedded row enters the HNSW graph as it is
#: written (a few hundred to a few thousand rows a second, by graph size), and every statement
#: must end within the OLTP statement timeout.
RESTORE_COPY_ROWS = 2_000


@dataclass(frozen=True)
class MemoryDraft:
    """A long-term memory to write, before it has an id.

    ``context`` is optional text that situates the memory for retrieval (the turns around it,
    a date, the document it came from): keyword recall indexes it beside ``text`` at a lower
    weight. It is not embedded (a small embedder's vector of the turn alone ranks better than
    one of the turn with its neighbours) and is never returned as the memory.
    docs/memory.md, "Recall modes".
    """

    text: str
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    project_id: uuid.UUID | None = None
    confidence: float = 1.0
    source: str = MemorySource.EXPLICIT
    source_session_id: str = ""
    context: str = ""
    #: When the thing happened or was said; the time of the write when not given.
    occurred_at: datetime | None = None
    #: When the fact became true; ``occurred_at`` when not given.
    valid_from: datetime | None = None
    #: Promotion embeds before it writes (to find near-duplicates); other writers leave the
    #: row pending and the embedding drain fills it.
    embedding: Sequence[float] | None = None
    #: The fingerprint of the model that made ``embedding`` (required with it).
    embedding_model: str = ""
    #: Promoted memories: the session turns it was compiled from, and the compiler.
    source_turn_seqs: Sequence[int] = ()
    compiler: str = ""


def memory_build(
    *, tenant: Tenant, subject_id: str, draft: MemoryDraft, now: datetime | None = None
) -> Memory:
    """The row ``draft`` describes, owned by ``(tenant, subject_id)``; not saved. ``now``: the
    time of the write (one per batch, so what a batch states without a time happened at one
    time: the change detector orders nothing within it)."""
    now = now or timezone.now()
    occurred_at = draft.occurred_at or now
    memory = Memory(
        tenant=tenant,
        subject_id=subject_id,
        text=draft.text,
        context=draft.context.strip(),
        embedding_content_hash=embedding_content_hash(draft.text),
        confidence=draft.confidence,
        source=draft.source,
        source_session_id=draft.source_session_id,
        source_turn_seqs=list(draft.source_turn_seqs),
        compiler=draft.compiler,
        tags=list(draft.tags),
        metadata=dict(draft.metadata),
        project_id=draft.project_id,
        occurred_at=occurred_at,
        valid_from=draft.valid_from or occurred_at,
    )
    if draft.embedding is not None:
        if not draft.embedding_model:
            raise ValueError("a vector must name the model that made it")
        memory.embedding = np.asarray(draft.embedding, dtype=np.float32)
        memory.embedded_at = now
        memory.embedding_model = draft.embedding_model
    return memory


@dataclass(frozen=True)
class Admission:
    #: How many more live memories the subject may hold.
    room: int
    #: How many more of its memories may be superseded (kept as history).
    history_room: int
    #: Whether any of the texts being written has a tombstone (it must go on an explicit write).
    tombstoned: bool


def memory_admission(
    *, tenant: Tenant, subject_id: str, content_hashes: Sequence[str] = ()
) -> Admission:
    """The subject's room under ``MEMORY_QUOTA_LIVE_ROWS`` and ``MEMORY_QUOTA_SUPERSEDED_ROWS``
    and whether any of ``content_hashes`` was forgotten. Call with the scope lock held."""
    admission = memory_scope_admission(
        tenant=tenant, subject_id=subject_id, content_hashes=content_hashes
    )
    return Admission(
        room=settings.MEMORY_QUOTA_LIVE_ROWS - admission.live,
        history_room=settings.MEMORY_QUOTA_SUPERSEDED_ROWS - admission.superseded,
        tombstoned=admission.tombstoned,
    )


def memory_admit(*, tenant: Tenant, subject_id: str, memories: Sequence[Memory]) -> Admission:
    """Raise :class:`QuotaExceeded` unless every one of ``memories`` fits the subject's quota."""
    admission = memory_admission(
        tenant=tenant,
        subject_id=subject_id,
        content_hashes=[memory.embedding_content_hash for memory in memories],
    )
    if len(memories) > admission.room:
        quota = settings.MEMORY_QUOTA_LIVE_ROWS
        live = quota - admission.room
        emit("memory.quota_exceeded", {"count": 1}, {"tenant_id": str(tenant.pk)})
        raise QuotaExceeded(
            f"This subject holds {live} of {quota} live memories; {len(memories)} more do not fit.",
            details={"quota": quota, "live": live, "requested": len(memories)},
        )
    return admission


def memory_admit_supersede(*, tenant: Tenant, subject_id: str) -> None:
    """Raise :class:`HistoryQuotaExceeded` unless one more of the subject's memories may be
    superseded: a supersede keeps the old version, so the subject's history grows by one."""
    admission = memory_admission(tenant=tenant, subject_id=subject_id)
    if admission.history_room <= 0:
        quota = settings.MEMORY_QUOTA_SUPERSEDED_ROWS
        emit("memory.history_quota_exceeded", {"count": 1}, {"tenant_id": str(tenant.pk)})
        raise HistoryQuotaExceeded(
            f"This subject keeps {quota - admission.history_room} of {quota} superseded "
            "memories; forget facts it no longer needs (each takes its versions) to supersede.",
            details={"quota": quota, "superseded": quota - admission.history_room},
        )


#: From how many rows a batch goes as one binary COPY rather than one INSERT: a COPY costs two
#: more round trips (the columns' types) but nothing per value, where an INSERT's statement
#: text grows with every row and is parsed again for each batch size.
COPY_FROM_ROWS = 20


def memory_insert(
    *,
    tenant: Tenant,
    subject_id: str,
    memories: Sequence[Memory],
    thread: bool = True,
    clear_tombstones: bool = False,
    detect_changes: bool = True,
) -> None:
    """Insert admitted rows of one subject (helper: inside the caller's transaction, scope lock
    held). ``thread``: give each its place in its session and its neighbours' text
    (``derived_context``); a caller that placed a row itself passes False. ``clear_tombstones``:
    the agent wrote a forgotten text again on purpose. ``detect_changes``: compare the rows with
    the subject's live memories and retire or flag what changed (``services/changes.py``); a
    caller that links the rows itself first passes False and runs it after. Rows without a
    vector wake the tenant's embedding drain after commit."""
    neighbours = (
        thread_new_memories(tenant=tenant, subject_id=subject_id, memories=memories)
        if thread
        else []
    )
    if len(memories) >= COPY_FROM_ROWS:
        copy_instances(memories, model=Memory, using=PRIMARY)
    else:
        insert_instances(memories, using=PRIMARY)
    Memory.objects.bulk_update(neighbours, ["derived_context"])
    if clear_tombstones:
        tombstone_clear(
            tenant=tenant,
            subject_id=subject_id,
            content_hashes=[memory.embedding_content_hash for memory in memories],
        )
    if detect_changes:
        memory_detect_changes(tenant=tenant, subject_id=subject_id, memories=memories)
    if any(memory.embedding is None for memory in memories):
        _wake_embedding_after_commit(tenant.pk)


def memory_restore(*, tenant: Tenant, memories: Sequence[Memory]) -> None:
    """Insert exported rows exactly as they were (helper for the tenant import, inside its
    transaction): ids, timestamps, session positions and version links kept, no quota, no
    threading. Rows without a vector stay pending; the beat backfill embeds them.

    Binary COPY, a statement per ``RESTORE_COPY_ROWS`` rows: the table's statement-level
    triggers build the keyword postings and the subject counts once per statement, set-wise.
    A row may name a successor that comes after it: the foreign key is checked at commit."""
    for memory in memories:
        memory.tenant = tenant
    for start in range(0, len(memories), RESTORE_COPY_ROWS):
        copy_instances(
            memories[start : start + RESTORE_COPY_ROWS], model=Memory, using=PRIMARY, stamp=False
        )


def _wake_embedding_after_commit(tenant_id: uuid.UUID) -> None:
    """After commit, wake the tenant's embedding drain (one upsert; a task only when none is
    queued). A broker outage must not turn the committed write into an error: the backfill
    embeds the rows once the broker is back."""

    def wake() -> None:
        memory_wake_embeddings(tenant_id=tenant_id)

    after_commit(wake)
