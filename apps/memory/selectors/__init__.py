"""Reads on agent memory. Import from the submodules; this package re-exports the public API."""

from apps.memory.selectors.changes import (
    memory_change_candidates,
    memory_live_candidates,
    memory_texts,
    memory_texts_naming,
)
from apps.memory.selectors.listing import (
    memory_list,
    memory_list_all_subjects,
    session_history,
)
from apps.memory.selectors.provenance import memory_provenance
from apps.memory.selectors.recall import (
    EMBEDDING_STATUSES,
    RECALL_MODES,
    RECALL_SELECTION_REASONS,
    VALIDITIES,
    RecallHit,
    RecallResult,
    memory_recall,
    memory_validity,
    timestamp_text,
    validate_recall_query,
)
from apps.memory.selectors.recall.hybrid import fuse
from apps.memory.selectors.recall.keyword import Keywords, keyword_ranking, keyword_scopes
from apps.memory.selectors.recall.rerank import (
    fetch_texts,
    forget_head_texts,
    head_texts,
    late_interaction_scores,
    rerank_enabled,
)
from apps.memory.selectors.recall.scope import recall_scope, reset_scope_templates
from apps.memory.selectors.scope_usage import (
    ADMISSION_SQL,
    SessionUsage,
    memory_live_count,
    memory_scope_admission,
    session_scope_usage,
)

__all__ = [
    "ADMISSION_SQL",
    "EMBEDDING_STATUSES",
    "RECALL_MODES",
    "RECALL_SELECTION_REASONS",
    "VALIDITIES",
    "Keywords",
    "RecallHit",
    "RecallResult",
    "SessionUsage",
    "fetch_texts",
    "forget_head_texts",
    "fuse",
    "head_texts",
    "keyword_ranking",
    "keyword_scopes",
    "late_interaction_scores",
    "memory_change_candidates",
    "memory_list",
    "memory_list_all_subjects",
    "memory_live_candidates",
    "memory_live_count",
    "memory_provenance",
    "memory_recall",
    "memory_scope_admission",
    "memory_texts",
    "memory_texts_naming",
    "memory_validity",
    "recall_scope",
    "rerank_enabled",
    "reset_scope_templates",
    "session_history",
    "session_scope_usage",
    "timestamp_text",
    "validate_recall_query",
]
