"""The long-term tier: remember, supersede, forget. Quota-checked, embedded after commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.core.db.inserts import insert_instances
from apps.core.db.on_commit import after_commit
from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import write_transaction
from apps.core.exceptions import ValidationFailed
from apps.knowledge.history import history_forget_subject
from apps.knowledge.services import articles_delete_for_memories
from apps.memory.exceptions import (
    AlreadySuperseded,
    InvalidProjectId,
    MemoryErrorCode,
    MemoryNotFound,
    QuotaExceeded,
)
from apps.memory.models import Memory, MemorySource
from apps.memory.selectors.scope_usage import memory_scope_admission
from apps.memory.services.derived_context import (
    ThreadRef,
    refresh_threads,
    thread_key,
    thread_new_memories,
)
from apps.memory.services.embedding import memory_wake_embeddings
from apps.memory.services.scope_lock import lock_memory_scope
from apps.memory.services.tombstones import tombstone_clear, tombstone_record
from apps.projects.selectors import project_exists
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class MemoryDraft:
    """A long-term memory to write, before it has an id.

    ``context`` is optional text that situates the memory for retrieval (the turns around it,
    a date, the document it came from): keyword recall indexes it beside ``text`` at a lower
    weight. It is not embedded (measured: a small embedder's vector of the turn alone ranks
    better than one of the turn with its neighbours) and is never returned as the memory.
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


def _validate_drafts(*, tenant: Tenant, drafts: Sequence[MemoryDraft]) -> None:
    """Everything that can be checked before a transaction opens (no side effects)."""
    if len(drafts) > settings.MEMORY_BATCH_MAX_ITEMS:
        raise ValidationFailed(
            f"At most {settings.MEMORY_BATCH_MAX_ITEMS} memories per call.",
            code=MemoryErrorCode.BATCH_TOO_LARGE,
        )
    for index, draft in enumerate(drafts):
        if not draft.text.strip():
            raise ValidationFailed("text must not be blank.", details={"index": index})
        if len(draft.text) > settings.MEMORY_TEXT_MAX_CHARS:
            raise ValidationFailed(
                f"text is longer than {settings.MEMORY_TEXT_MAX_CHARS} characters.",
                code=MemoryErrorCode.TEXT_TOO_LONG,
                details={"index": index, "max_chars": settings.MEMORY_TEXT_MAX_CHARS},
            )
        if len(draft.context) > settings.MEMORY_CONTEXT_MAX_CHARS:
            raise ValidationFailed(
                f"context is longer than {settings.MEMORY_CONTEXT_MAX_CHARS} characters.",
                code=MemoryErrorCode.TEXT_TOO_LONG,
                details={"index": index, "max_chars": settings.MEMORY_CONTEXT_MAX_CHARS},
            )
        if not 0.0 <= draft.confidence <= 1.0:
            raise ValidationFailed("confidence must be within [0, 1].", details={"index": index})
    for project_id in {d.project_id for d in drafts if d.project_id is not None}:
        if not project_exists(tenant=tenant, project_id=project_id):
            raise InvalidProjectId(
                "project_id is not a project of this tenant.",
                details={"project_id": str(project_id)},
            )


def _admit(*, tenant: Tenant, subject_id: str, memories: Sequence[Memory]) -> bool:
    """Raise unless ``memories`` fit the subject's quota; return whether any of their texts was
    forgotten (its tombstone must go). Call with the scope lock held."""
    quota = settings.MEMORY_QUOTA_LIVE_ROWS
    admission = memory_scope_admission(
        tenant=tenant,
        subject_id=subject_id,
        content_hashes=[memory.embedding_content_hash for memory in memories],
    )
    adding = len(memories)
    if admission.live + adding > quota:
        raise QuotaExceeded(
            f"This subject holds {admission.live} of {quota} live memories; "
            f"{adding} more do not fit.",
            details={"quota": quota, "live": admission.live, "requested": adding},
        )
    return admission.tombstoned


def _build(*, tenant: Tenant, subject_id: str, draft: MemoryDraft) -> Memory:
    return Memory(
        tenant=tenant,
        subject_id=subject_id,
        text=draft.text,
        context=draft.context.strip(),
        embedding_content_hash=embedding_content_hash(draft.text),
        confidence=draft.confidence,
        source=draft.source,
        source_session_id=draft.source_session_id,
        tags=list(draft.tags),
        metadata=dict(draft.metadata),
        project_id=draft.project_id,
        occurred_at=draft.occurred_at or timezone.now(),
    )


def _enqueue_embedding(memories: Sequence[Memory]) -> None:
    """After commit, wake the tenant's embedding drain (one upsert; a task only when none is
    queued). robust: a broker outage must not turn the committed write into an error; the
    backfill embeds the rows once the broker is back."""
    tenant_ids = {memory.tenant_id for memory in memories}
    for tenant_id in tenant_ids:
        after_commit(_embedding_waker(tenant_id))


def _embedding_waker(tenant_id: uuid.UUID) -> Callable[[], None]:
    def wake() -> None:
        memory_wake_embeddings(tenant_id=tenant_id)

    return wake


def memory_create_many(
    *, tenant: Tenant, subject_id: str, drafts: Sequence[MemoryDraft]
) -> list[Memory]:
    """Write memories all-or-nothing: validation and quota cover the whole batch."""
    _validate_drafts(tenant=tenant, drafts=drafts)
    if not drafts:
        return []
    with write_transaction():
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        memories = [_build(tenant=tenant, subject_id=subject_id, draft=draft) for draft in drafts]
        forgotten = _admit(tenant=tenant, subject_id=subject_id, memories=memories)
        # With the scope lock held, so session positions cannot race another write.
        neighbours = thread_new_memories(tenant=tenant, subject_id=subject_id, memories=memories)
        insert_instances(memories, using=PRIMARY)
        Memory.objects.bulk_update(neighbours, ["derived_context"])
        if forgotten:
            # An explicit write is the agent choosing to know the fact again.
            tombstone_clear(
                tenant=tenant,
                subject_id=subject_id,
                content_hashes=[memory.embedding_content_hash for memory in memories],
            )
        _enqueue_embedding(memories)
    return memories


def memory_remember(*, tenant: Tenant, subject_id: str, draft: MemoryDraft) -> Memory:
    return memory_create_many(tenant=tenant, subject_id=subject_id, drafts=[draft])[0]


def _locked_memory(*, tenant: Tenant, subject_id: str, memory_id: uuid.UUID) -> Memory:
    """The subject's memory, row-locked; another subject's is the same 404 as a missing one."""
    memory = (
        Memory.objects.select_for_update()
        .filter(tenant=tenant, subject_id=subject_id, pk=memory_id)
        .first()
    )
    if memory is None:
        raise MemoryNotFound("Memory not found.")
    return memory


def memory_supersede(
    *, tenant: Tenant, subject_id: str, memory_id: uuid.UUID, draft: MemoryDraft
) -> Memory:
    """Write ``draft`` as the new live version of ``memory_id``; the old row is kept, hidden."""
    _validate_drafts(tenant=tenant, drafts=[draft])
    with write_transaction():
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        old = _locked_memory(tenant=tenant, subject_id=subject_id, memory_id=memory_id)
        if old.superseded_by_id is not None:
            raise AlreadySuperseded(
                "This memory was already superseded; supersede its live version.",
                details={"superseded_by": str(old.superseded_by_id)},
            )
        # Replacing a live row leaves the live count unchanged, so a full subject can still
        # correct itself.
        new = _build(tenant=tenant, subject_id=subject_id, draft=draft)
        same_place = (
            old.context_thread != ""
            and new.source == MemorySource.EXPLICIT
            and new.project_id == old.project_id
            and thread_key(new.metadata) == old.context_thread
        )
        if same_place:
            # The new version takes the old one's place in its session.
            new.context_thread, new.thread_seq = old.context_thread, old.thread_seq
            neighbours = []
        else:
            neighbours = thread_new_memories(tenant=tenant, subject_id=subject_id, memories=[new])
        new.save()
        tombstone_clear(
            tenant=tenant, subject_id=subject_id, content_hashes=[new.embedding_content_hash]
        )
        Memory.objects.bulk_update(neighbours, ["derived_context"])
        # History quotes nobody: only live memories are anyone's neighbours.
        Memory.objects.filter(pk=old.pk).update(
            superseded_by=new, superseded_at=timezone.now(), derived_context=""
        )
        if old.context_thread and old.thread_seq is not None:
            refresh_threads(
                tenant=tenant,
                subject_id=subject_id,
                around={(old.project_id, old.context_thread): [old.thread_seq]},
            )
        _enqueue_embedding([new])
    return new


@dataclass(frozen=True)
class ForgetResult:
    memories_deleted: int
    articles_deleted: list[uuid.UUID]
    tombstones: int


def _forget_fact(*, tenant: Tenant, subject_id: str, root: Memory) -> ForgetResult:
    """Delete ``root`` and every older version it superseded (forget means the whole fact),
    delete the articles graduated from them, tombstone their fingerprints and drop the
    subject's shown-history. History is followed inside (tenant, subject) only, so a
    ``superseded_by`` link that crossed subjects can never delete another subject's row.
    The live neighbours that quoted the forgotten memory are re-derived, so its words leave
    the keyword index with it.
    """
    scoped = Memory.objects.filter(tenant=tenant, subject_id=subject_id)
    doomed = [root.pk]
    frontier = [root.pk]
    while frontier:
        frontier = list(
            scoped.filter(superseded_by__in=frontier)
            .exclude(pk__in=doomed)
            .values_list("pk", flat=True)
        )
        doomed.extend(frontier)
    hashes = list(scoped.filter(pk__in=doomed).values_list("embedding_content_hash", flat=True))
    archived = articles_delete_for_memories(tenant=tenant, memory_ids=doomed)
    around: dict[ThreadRef, list[int]] = {}
    if root.context_thread and root.thread_seq is not None and root.superseded_by_id is None:
        around[(root.project_id, root.context_thread)] = [root.thread_seq]
    deleted, _ = scoped.filter(pk__in=doomed).delete()
    refresh_threads(tenant=tenant, subject_id=subject_id, around=around)
    tombstones = tombstone_record(tenant=tenant, subject_id=subject_id, content_hashes=hashes)
    after_commit(lambda: history_forget_subject(tenant_id=tenant.pk, subject_id=subject_id))
    return ForgetResult(memories_deleted=deleted, articles_deleted=archived, tombstones=tombstones)


def memory_forget(*, tenant: Tenant, subject_id: str, memory_id: uuid.UUID) -> ForgetResult:
    """Forget one of the caller's memories: the whole fact, everywhere (see ``_forget_fact``).
    Foreign = missing = 404."""
    with write_transaction():
        # The scope lock first, as every writer takes it: the neighbours re-derived below
        # must not race a write to the same session.
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        memory = _locked_memory(tenant=tenant, subject_id=subject_id, memory_id=memory_id)
        return _forget_fact(tenant=tenant, subject_id=subject_id, root=memory)


def memory_forget_any(*, tenant: Tenant, memory_id: uuid.UUID) -> ForgetResult:
    """Operator oversight: forget any subject's memory in ``tenant``, as that subject would
    (the owner is read first so the subject's scope lock can be taken before the row's)."""
    owner = Memory.objects.filter(tenant=tenant, pk=memory_id).values_list("subject_id", flat=True)
    subject_id = owner.first()
    if subject_id is None:
        raise MemoryNotFound("Memory not found.")
    return memory_forget(tenant=tenant, subject_id=subject_id, memory_id=memory_id)
