"""Provenance of one memory: what it was derived from and what was derived from it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from apps.knowledge.selectors import DerivedArticle, articles_derived_from_memory
from apps.memory.exceptions import MemoryNotFound
from apps.memory.models import Memory, SessionMemory
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class MemoryProvenance:
    memory: Memory
    #: The session turns it was compiled from that still exist (they expire with their TTL).
    turns_present: list[int]
    #: Older versions this memory superseded (directly).
    supersedes: list[uuid.UUID]
    derived_to: list[DerivedArticle] = field(default_factory=list)

    def derived_from(self) -> dict[str, Any]:
        memory = self.memory
        return {
            "source": memory.source,
            "session_id": memory.source_session_id or None,
            "turn_seqs": list(memory.source_turn_seqs),
            "turns_present": self.turns_present,
            "compiler": memory.compiler or None,
            "supersedes": [str(pk) for pk in self.supersedes],
        }


def memory_provenance(
    *, tenant: Tenant, subject_id: str | None, memory_id: uuid.UUID
) -> MemoryProvenance:
    """One memory with its provenance. ``subject_id=None`` is operator oversight (any subject
    of the tenant); otherwise another subject's memory is the same 404 as a missing one."""
    memories = Memory.objects.filter(tenant=tenant, pk=memory_id).defer("embedding")
    if subject_id is not None:
        memories = memories.filter(subject_id=subject_id)
    memory = memories.first()
    if memory is None:
        raise MemoryNotFound("Memory not found.")
    turns_present: list[int] = []
    if memory.source_turn_seqs:
        turns_present = sorted(
            SessionMemory.objects.filter(
                tenant=tenant,
                subject_id=memory.subject_id,
                session_id=memory.source_session_id,
                seq__in=list(memory.source_turn_seqs),
            ).values_list("seq", flat=True)
        )
    supersedes = list(
        Memory.objects.filter(
            tenant=tenant, subject_id=memory.subject_id, superseded_by=memory.pk
        ).values_list("pk", flat=True)
    )
    return MemoryProvenance(
        memory=memory,
        turns_present=turns_present,
        supersedes=supersedes,
        derived_to=articles_derived_from_memory(
            tenant=tenant, memory_id=memory.pk, graduated_article_id=memory.graduated_article_id
        ),
    )
