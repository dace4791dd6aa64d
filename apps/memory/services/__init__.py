"""Writes on agent memory. Import from the submodules; this package re-exports the public API."""

from apps.memory.services.batch import memory_write_batch
from apps.memory.services.derived_context import IMPLICIT_THREAD_PREFIX, is_turn
from apps.memory.services.embedding import (
    MigrationBatch,
    memory_backfill_embeddings,
    memory_drain_embeddings,
    memory_embed_now,
    memory_embed_pending,
    memory_migrate_batch,
    memory_wake_embeddings,
)
from apps.memory.services.erasure import memory_erase, memory_erasure_lock
from apps.memory.services.graduation import (
    RE_SCOPE_GLOBAL,
    memory_graduate,
    memory_graduation_sweep,
    parse_memory_id,
    parse_re_scope,
)
from apps.memory.services.long_term import (
    memory_create_many,
    memory_forget,
    memory_forget_any,
    memory_remember,
    memory_supersede,
)
from apps.memory.services.promotion import (
    PromotionSnoozed,
    assert_promotion_ttl_invariant,
    confidence_gate,
    promotion_persist,
    promotion_request,
    promotion_run,
    validate_promotion_session_id,
)
from apps.memory.services.promotion_lease import (
    RETRIES_EXHAUSTED,
    assert_promotion_lease_invariant,
    job_claim,
    job_fail,
)
from apps.memory.services.promotion_sweeper import promotion_sweep
from apps.memory.services.recall import memory_recall_record
from apps.memory.services.rows import COPY_FROM_ROWS, MemoryDraft, memory_restore
from apps.memory.services.sessions import (
    SessionTurnDraft,
    session_append,
    session_append_many,
    session_clear,
    session_id_validate,
    session_prune_expired,
    session_turn_bytes,
    session_turn_delete,
)
from apps.memory.services.tombstones import tombstone_record
from apps.memory.services.validity import memory_flag_conflict

__all__ = [
    "COPY_FROM_ROWS",
    "IMPLICIT_THREAD_PREFIX",
    "RETRIES_EXHAUSTED",
    "RE_SCOPE_GLOBAL",
    "MemoryDraft",
    "MigrationBatch",
    "PromotionSnoozed",
    "SessionTurnDraft",
    "assert_promotion_lease_invariant",
    "assert_promotion_ttl_invariant",
    "confidence_gate",
    "is_turn",
    "job_claim",
    "job_fail",
    "memory_backfill_embeddings",
    "memory_create_many",
    "memory_drain_embeddings",
    "memory_embed_now",
    "memory_embed_pending",
    "memory_erase",
    "memory_erasure_lock",
    "memory_flag_conflict",
    "memory_forget",
    "memory_forget_any",
    "memory_graduate",
    "memory_graduation_sweep",
    "memory_migrate_batch",
    "memory_recall_record",
    "memory_remember",
    "memory_restore",
    "memory_supersede",
    "memory_wake_embeddings",
    "memory_write_batch",
    "parse_memory_id",
    "parse_re_scope",
    "promotion_persist",
    "promotion_request",
    "promotion_run",
    "promotion_sweep",
    "session_append",
    "session_append_many",
    "session_clear",
    "session_id_validate",
    "session_prune_expired",
    "session_turn_bytes",
    "session_turn_delete",
    "tombstone_record",
    "validate_promotion_session_id",
]
