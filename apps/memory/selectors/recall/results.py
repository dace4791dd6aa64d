"""What a recall returns: hits, the envelope, and the names its ``meta`` and hits use."""

from __future__ import annotations

import uuid
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from apps.memory.models import Memory, MemorySource

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
#: Whether a hit still holds: nothing replaced it; a newer memory did (``superseded_by``,
#: ``valid_to``); or another live memory states a different value and Engram would not decide
#: which holds (``conflicts_with``).
VALIDITY_CURRENT = "current"
VALIDITY_SUPERSEDED = "superseded"
VALIDITY_CONTESTED = "contested"
VALIDITIES = (VALIDITY_CURRENT, VALIDITY_SUPERSEDED, VALIDITY_CONTESTED)
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

    @property
    def validity(self) -> str:
        """``superseded``, ``contested`` or ``current`` (see :data:`VALIDITIES`)."""
        return memory_validity(self.memory)


def memory_validity(memory: Memory) -> str:
    """Whether ``memory`` still holds: ``superseded``, ``contested`` or ``current``."""
    if memory.superseded_by_id is not None:
        return VALIDITY_SUPERSEDED
    return VALIDITY_CONTESTED if memory.conflicts_with else VALIDITY_CURRENT


def _newer(first: Memory, second: Memory) -> bool:
    """Whether ``second`` is the later value of a conflict with ``first``: it became true
    later, and it does not put a promoted memory before an explicit one (an agent's own
    statement is never outranked by what promotion inferred)."""
    if second.valid_from <= first.valid_from:
        return False
    return not (first.source == MemorySource.EXPLICIT and second.source == MemorySource.PROMOTED)


def prefer_current(
    results: list[RecallHit],
    same_fact: Set[frozenset[uuid.UUID]] = frozenset(),
    *,
    superseded_last: bool = True,
) -> list[RecallHit]:
    """The ranking with what still holds first: a superseded hit (``include_superseded``)
    follows every hit that was not replaced (unless not ``superseded_last``: a question's time
    window asks what held then), and of two hits in conflict — or that say nearly the same
    thing (``same_fact``: pairs of ids) — the one that became true later comes first
    (:func:`_newer`). Otherwise the ranking's order is kept, so equal times and an explicit
    memory contradicted by a promoted one stay as ranked.

    The time filter of ``as_of`` is in the scope itself (``scope.in_time``); this only orders
    what the ranking returned."""
    ordered = [hit for hit in results if hit.memory.superseded_by_id is None or not superseded_last]
    if superseded_last:
        ordered += [hit for hit in results if hit.memory.superseded_by_id is not None]
    if not same_fact and not any(hit.memory.conflicts_with for hit in ordered):
        return ordered  # nothing related: no pair to put in order

    def related(first: Memory, second: Memory) -> bool:
        return second.pk in first.conflicts_with or frozenset((first.pk, second.pk)) in same_fact

    # Each move puts a strictly later fact before an earlier one, so this settles; the bound
    # only makes that visible.
    for _ in range(len(ordered) ** 2):
        moved = False
        for index, hit in enumerate(ordered):
            later = next(
                (
                    position
                    for position in range(index + 1, len(ordered))
                    if related(hit.memory, ordered[position].memory)
                    and _newer(hit.memory, ordered[position].memory)
                ),
                None,
            )
            if later is not None:
                ordered.insert(index, ordered.pop(later))
                moved = True
                break
        if not moved:
            break
    return ordered


def replaced_first(results: list[RecallHit]) -> list[RecallHit]:
    """The ranking with each replaced hit moved just above the hit that replaced it
    (``superseded_by``), when both are in it: for a question about what used to be, the
    earlier value is the answer and its successor the context. Otherwise the order stands."""
    ordered = list(results)
    for hit in results:
        successor = hit.memory.superseded_by_id
        if successor is None:
            continue
        positions = {item.memory.pk: index for index, item in enumerate(ordered)}
        above, own = positions.get(successor), positions[hit.memory.pk]
        if above is not None and above < own:
            ordered.insert(above, ordered.pop(own))
    return ordered


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
