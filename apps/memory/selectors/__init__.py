"""Reads on agent memory. Import from the submodules; this package re-exports the public API."""

from apps.memory.selectors.listing import (
    memory_list,
    memory_list_all_subjects,
    session_history,
)
from apps.memory.selectors.recall import (
    EMBEDDING_STATUSES,
    RECALL_MODES,
    RECALL_SELECTION_REASONS,
    RecallHit,
    RecallResult,
    memory_recall,
)

__all__ = [
    "EMBEDDING_STATUSES",
    "RECALL_MODES",
    "RECALL_SELECTION_REASONS",
    "RecallHit",
    "RecallResult",
    "memory_list",
    "memory_list_all_subjects",
    "memory_recall",
    "session_history",
]
