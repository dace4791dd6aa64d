"""What a recall returns: hits, the envelope, and the names its ``meta`` and hits use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.memory.models import Memory

#: Fallback reason when the heavy-read repo fails (statement timeout, replica down).
HEAVY_READ_UNAVAILABLE = "heavy_read_unavailable"
STRATEGY_EXACT = "exact"
STRATEGY_ANN = "ann"
STRATEGY_ANN_EXACT = "ann+exact"
STRATEGY_FALLBACK = "fallback"
STRATEGY_KEYWORD = "keyword"
MODE_SEMANTIC = "semantic"
MODE_KEYWORD = "keyword"
MODE_HYBRID = "hybrid"
RECALL_MODES = (MODE_SEMANTIC, MODE_KEYWORD, MODE_HYBRID)
REASON_SEMANTIC = "semantic"
REASON_KEYWORD = "keyword"
REASON_KEYWORD_AND_SEMANTIC = "keyword+semantic"
REASON_KEYWORD_FALLBACK = "keyword_fallback"
REASON_ILIKE_FALLBACK = "ilike_fallback"
#: Found by its words while its embedding is still pending: the keyword leg only could rank it.
REASON_KEYWORD_PENDING = "keyword_pending"
RECALL_SELECTION_REASONS = (
    REASON_SEMANTIC,
    REASON_KEYWORD,
    REASON_KEYWORD_AND_SEMANTIC,
    REASON_KEYWORD_FALLBACK,
    REASON_ILIKE_FALLBACK,
    REASON_KEYWORD_PENDING,
)
EMBEDDING_READY = "ready"
EMBEDDING_PENDING = "pending"
EMBEDDING_STATUSES = (EMBEDDING_READY, EMBEDDING_PENDING)


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float | None
    #: Which ranking put the memory here (the REASON_* values).
    selection_reason: str = REASON_SEMANTIC
    #: Cosine similarity to the query when the vector leg ranked it (the recall bump's test).
    similarity: float | None = None

    @property
    def embedding_status(self) -> str:
        """``pending`` while the memory has no vector yet (only its words can find it)."""
        # `embedded_at` is set in the same UPDATE as the vector; recall never loads the vector.
        return EMBEDDING_READY if self.memory.embedded_at is not None else EMBEDDING_PENDING


@dataclass
class RecallResult:
    results: list[RecallHit]
    meta: dict[str, Any] = field(default_factory=dict)


def envelope_meta(
    *, results: list[RecallHit], limit: int, strategy: str, pending_searched: int = 0
) -> dict[str, Any]:
    """The spec's ``meta`` fields every non-fallback recall reports.

    ``pending_searched``: how many of the scope's rows were searched by their words only,
    their embedding still pending (0 in ``semantic`` mode, which cannot rank them)."""
    return {
        "total_count": len(results),
        "fallback": False,
        "reason": None,
        "underfilled": len(results) < limit,
        "strategy": strategy,
        "pending_searched": pending_searched,
    }
