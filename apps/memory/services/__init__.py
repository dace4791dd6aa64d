"""Writes on agent memory. Import from the submodules; this package re-exports the public API."""

from apps.memory.services.batch import memory_write_batch
from apps.memory.services.embedding import (
    memory_backfill_embeddings,
    memory_drain_embeddings,
    memory_embed_pending,
    memory_wake_embeddings,
)
from apps.memory.services.erasure import memory_erase, memory_erasure_lock
from apps.memory.services.long_term import (
    memory_create_many,
    memory_forget,
    memory_forget_any,
    memory_remember,
    memory_supersede,
)
from apps.memory.services.rows import MemoryDraft, memory_restore
from apps.memory.services.sessions import (
    SessionTurnDraft,
    session_append,
    session_append_many,
    session_clear,
    session_prune_expired,
    session_turn_delete,
)

__all__ = [
    "MemoryDraft",
    "SessionTurnDraft",
    "memory_backfill_embeddings",
    "memory_create_many",
    "memory_drain_embeddings",
    "memory_embed_pending",
    "memory_erase",
    "memory_erasure_lock",
    "memory_forget",
    "memory_forget_any",
    "memory_remember",
    "memory_restore",
    "memory_supersede",
    "memory_wake_embeddings",
    "memory_write_batch",
    "session_append",
    "session_append_many",
    "session_clear",
    "session_prune_expired",
    "session_turn_delete",
]
