from __future__ import annotations

from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_remember


def remember(tenant, subject_id: str, text: str, *, embed: bool = True, **draft) -> Memory:
    """Write a memory through the service and (by default) run the embedding step at once."""
    memory = memory_remember(
        tenant=tenant, subject_id=subject_id, draft=MemoryDraft(text=text, **draft)
    )
    if embed:
        memory_embed_pending(memory_ids=[str(memory.pk)])
        memory.refresh_from_db()
    return memory
