"""The long-term tier: remember, supersede, forget. Quota-checked, embedded after commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from apps.core.db.on_commit import after_commit
from apps.core.db.transactions import write_transaction
from apps.core.exceptions import ValidationFailed
from apps.knowledge.history import history_forget_subject
from apps.knowledge.services import articles_delete_for_memories, lock_tenant_article_counts
from apps.memory.exceptions import (
    AlreadySuperseded,
    InvalidProjectId,
    MemoryErrorCode,
    MemoryNotFound,
)
from apps.memory.models import Memory, SupersedeReason
from apps.memory.services.changes import memory_detect_changes
from apps.memory.services.derived_context import ThreadRef, refresh_threads, takes_place_of
from apps.memory.services.rows import (
    MemoryDraft,
    memory_admit,
    memory_admit_supersede,
    memory_build,
    memory_insert,
)
from apps.memory.services.scope_lock import lock_memory_scope
from apps.memory.services.tombstones import tombstone_record
from apps.memory.services.validity import (
    memory_drop_references,
    memory_quote_replaced,
    memory_retire,
)
from apps.projects.selectors import project_exists
from apps.tenancy.models import Tenant
from apps.tenancy.services import idempotency_forget_responses


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


def memory_create_many(
    *, tenant: Tenant, subject_id: str, drafts: Sequence[MemoryDraft]
) -> list[Memory]:
    """Write memories all-or-nothing: validation and quota cover the whole batch."""
    _validate_drafts(tenant=tenant, drafts=drafts)
    if not drafts:
        return []
    with write_transaction():
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        now = timezone.now()
        memories = [
            memory_build(tenant=tenant, subject_id=subject_id, draft=draft, now=now)
            for draft in drafts
        ]
        admission = memory_admit(tenant=tenant, subject_id=subject_id, memories=memories)
        # An explicit write is the agent choosing to know a forgotten fact again.
        memory_insert(
            tenant=tenant,
            subject_id=subject_id,
            memories=memories,
            clear_tombstones=admission.tombstoned,
        )
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
        # correct itself; the old version joins its history, which has a quota of its own.
        memory_admit_supersede(tenant=tenant, subject_id=subject_id)
        new = memory_build(tenant=tenant, subject_id=subject_id, draft=draft)
        new.supersedes, new.supersede_reason = [old.pk], SupersedeReason.EXPLICIT
        same_place = takes_place_of(new, old)
        if same_place:
            # The new version takes the old one's place in its session.
            new.context_thread, new.thread_seq = old.context_thread, old.thread_seq
        memory_insert(
            tenant=tenant,
            subject_id=subject_id,
            memories=[new],
            thread=not same_place,
            clear_tombstones=True,
            detect_changes=False,
        )
        memory_retire(
            tenant=tenant,
            subject_id=subject_id,
            old=old,
            new=new,
            reason=SupersedeReason.EXPLICIT,
            now=timezone.now(),
        )
        # Other live memories may state the value this one replaces, too.
        memory_detect_changes(tenant=tenant, subject_id=subject_id, memories=[new])
    return new


@dataclass(frozen=True)
class ForgetResult:
    memories_deleted: int
    articles_deleted: list[uuid.UUID]
    tombstones: int


def _forget_fact(*, tenant: Tenant, subject_id: str, root: Memory) -> ForgetResult:
    """Delete ``root`` and every older version it superseded (forget means the whole fact),
    delete the articles graduated from them, tombstone their fingerprints and drop the
    subject's shown-history and the subject's kept ``Idempotency-Key`` responses that name
    them. History is followed inside (tenant, subject) only, so a
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
    quoting = list(
        scoped.filter(supersedes__overlap=doomed)
        .exclude(pk__in=doomed)
        .values_list("pk", flat=True)
    )
    deleted, _ = scoped.filter(pk__in=doomed).delete()
    # The rows that named a forgotten one (the version that replaced it, a conflicting fact)
    # stop naming it, and a version that quoted it quotes it no more.
    memory_drop_references(tenant=tenant, subject_id=subject_id, ids=doomed)
    memory_quote_replaced(
        tenant=tenant, subject_id=subject_id, memories=list(scoped.filter(pk__in=quoting))
    )
    refresh_threads(tenant=tenant, subject_id=subject_id, around=around)
    tombstones = tombstone_record(tenant=tenant, subject_id=subject_id, content_hashes=hashes)
    # A kept response of the write that created (or superseded, or graduated) the fact would
    # otherwise hand its text back to a retry of that write for the rest of its 24 h.
    idempotency_forget_responses(
        tenant=tenant, subject_id=subject_id, resource_ids=[*doomed, *archived]
    )
    after_commit(lambda: history_forget_subject(tenant_id=tenant.pk, subject_id=subject_id))
    return ForgetResult(memories_deleted=deleted, articles_deleted=archived, tombstones=tombstones)


def memory_forget(*, tenant: Tenant, subject_id: str, memory_id: uuid.UUID) -> ForgetResult:
    """Forget one of the caller's memories: the whole fact, everywhere (see ``_forget_fact``).
    Foreign = missing = 404."""
    with write_transaction():
        # The scope lock first, as every writer takes it: the neighbours re-derived below
        # must not race a write to the same session.
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        # Forget may delete articles graduated from the fact: the tenant's article counts are
        # taken before any row, as every writer of them does (graduation holds them while it
        # stamps its memory).
        lock_tenant_article_counts(tenant=tenant)
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
