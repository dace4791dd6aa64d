"""Diversity selection over a ranked candidate pool (spec "Diversity selection on the
knowledge half").

Similarity proposes; it does not dispose. Given candidates ranked best first, :func:`select`
chooses ``limit`` of them in four stages:

1. **Containment in history**: a candidate the session was already shown is set aside. It has
   a floor: if the pool cannot fill ``limit`` without them, the highest-ranked repeats are
   readmitted (``readmitted_already_seen``) rather than leaving a hole.
2. **Exact-fingerprint dedupe**: candidates sharing a fingerprint collapse to the highest
   ranked one. ``None`` is not a fingerprint, so two unhashed candidates never collapse.
3. **Near-duplicate removal**: a candidate whose cosine similarity to an ALREADY-SELECTED
   candidate reaches ``near_dup_threshold`` is dropped. It is measured against the selected
   set, never against the query: two articles can both be relevant and still be one fact
   twice.
4. **MMR**: the next pick maximises ``lambda * relevance - (1 - lambda) * max_sim_selected``.
   At ``lambda == 1.0`` this is exactly the top-N of what stages 1-3 left.

And four properties hold:

* every drop is refilled from the rest of the pool (nothing is left as a hole while unseen
  candidates remain);
* selection decides WHAT, never the ORDER: ``selected`` keeps the input's rank order;
* a candidate without a vector is never dropped by a similarity stage (unmeasurable is not
  similar), and counts as similarity 0 in MMR;
* ``meta`` reports every count, plus the ``lambda`` and ``near_dup_threshold`` applied.

Pure Python over plain values: no database, no Django models, so merged recall and search
share it and tests exercise it directly.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from django.conf import settings

T = TypeVar("T")
#: A candidate's vector: a list of floats, or the float32 array a search read it as.
VectorLike = Sequence[float] | np.ndarray[Any, Any]

DROP_ALREADY_SEEN = "already_seen"
DROP_EXACT_DUPLICATE = "exact_duplicate"
DROP_NEAR_DUPLICATE = "near_duplicate"


@dataclass(frozen=True, eq=False)
class Candidate(Generic[T]):
    """One ranked candidate. ``score`` may be ``None`` (unscored); ``vector`` may be missing."""

    key: Hashable
    item: T
    score: float | None = None
    vector: VectorLike | None = None
    fingerprint: str | None = None


@dataclass(frozen=True)
class DiversityOptions:
    """Per-call overrides of the ``KNOWLEDGE_DIVERSITY_*`` settings; ``None`` = the setting."""

    enabled: bool | None = None
    lambda_: float | None = None
    near_dup_threshold: float | None = None
    over_fetch: int | None = None
    max_pool: int | None = None

    def resolved(self) -> ResolvedDiversity:
        return ResolvedDiversity(
            enabled=_pick(self.enabled, settings.KNOWLEDGE_DIVERSITY_ENABLED),
            lambda_=float(_pick(self.lambda_, settings.KNOWLEDGE_DIVERSITY_LAMBDA)),
            near_dup_threshold=float(
                _pick(self.near_dup_threshold, settings.KNOWLEDGE_DIVERSITY_NEAR_DUP_THRESHOLD)
            ),
            over_fetch=max(1, int(_pick(self.over_fetch, settings.KNOWLEDGE_DIVERSITY_OVER_FETCH))),
            max_pool=max(1, int(_pick(self.max_pool, settings.KNOWLEDGE_DIVERSITY_MAX_POOL))),
        )


@dataclass(frozen=True)
class ResolvedDiversity:
    enabled: bool
    lambda_: float
    near_dup_threshold: float
    over_fetch: int
    max_pool: int

    def window(self, limit: int) -> int:
        """How many ranked candidates the selector looks at for ``limit`` picks."""
        return max(limit, min(limit * self.over_fetch, self.max_pool))


@dataclass
class DiversityOutcome(Generic[T]):
    #: The chosen candidates, in the input's rank order.
    selected: list[Candidate[T]]
    #: Every candidate not selected (dropped or simply not reached), in rank order.
    unpicked: list[Candidate[T]]
    #: Why each dropped candidate was dropped, by key.
    dropped: dict[Hashable, str] = field(default_factory=dict)
    #: Keys of already-seen candidates readmitted by the floor.
    readmitted: list[Hashable] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def _pick(value: Any, default: Any) -> Any:
    return default if value is None else value


def _unit_vectors(candidates: Sequence[Candidate[T]]) -> list[np.ndarray[Any, Any] | None]:
    vectors: list[np.ndarray[Any, Any] | None] = []
    for candidate in candidates:
        if candidate.vector is None or len(candidate.vector) == 0:
            vectors.append(None)
            continue
        vector = np.asarray(candidate.vector, dtype=np.float64)
        norm = float(np.linalg.norm(vector))
        # A zero or non-finite vector cannot be measured; treat it like a missing one.
        vectors.append(vector / norm if norm > 0 and np.isfinite(norm) else None)
    return vectors


def _relevances(candidates: Sequence[Candidate[T]], pinned: Collection[Hashable]) -> list[float]:
    """Relevance in [0, 1] that never increases down the ranking.

    The ranking is the authority: an unscored candidate, or one whose score is out of order,
    takes the relevance of the candidate above it. That is what makes ``lambda == 1.0``
    exactly top-N. Pinned candidates are excluded from the envelope (they are selected
    regardless, and a pinned unscored winner must not cap everyone else).
    """
    envelope: list[float] = []
    current: float | None = None
    for candidate in candidates:
        if candidate.key not in pinned and candidate.score is not None:
            current = candidate.score if current is None else min(current, candidate.score)
        envelope.append(current if current is not None else 1.0)
    top = max(envelope, default=1.0)
    if top <= 0:
        # Scores that are not positive cannot be scaled; fall back to rank position.
        count = max(len(candidates), 1)
        return [1.0 - index / count for index in range(len(candidates))]
    return [value / top for value in envelope]


def select(
    candidates: Sequence[Candidate[T]],
    *,
    limit: int,
    lambda_: float | None = None,
    near_dup_threshold: float | None = None,
    history_seen: Collection[Hashable] = frozenset(),
    pinned: Collection[Hashable] = frozenset(),
    enabled: bool | None = None,
) -> DiversityOutcome[T]:
    """Choose up to ``limit`` of ``candidates`` (ranked best first); see the module docstring.

    ``lambda_``, ``near_dup_threshold`` and ``enabled`` default to the
    ``KNOWLEDGE_DIVERSITY_*`` settings. ``history_seen`` holds the keys this session was
    already shown; ``pinned`` keys are always selected (and count as selected for stages 2-4),
    even when already seen.
    """
    options = DiversityOptions(
        enabled=enabled, lambda_=lambda_, near_dup_threshold=near_dup_threshold
    ).resolved()
    lam, threshold = options.lambda_, options.near_dup_threshold
    limit = max(0, limit)
    vectors = _unit_vectors(candidates)
    meta: dict[str, Any] = {
        "enabled": options.enabled,
        "lambda": lam,
        "near_dup_threshold": threshold,
        "candidates": len(candidates),
        "selected": 0,
        "vectors_available": sum(1 for vector in vectors if vector is not None),
        "dropped_near_duplicates": 0,
        "dropped_exact_duplicates": 0,
        "dropped_already_seen": 0,
        "readmitted_already_seen": 0,
    }
    indexes = range(len(candidates))
    pinned_idx = [i for i in indexes if candidates[i].key in pinned][:limit]

    if not options.enabled:
        picked = set(pinned_idx)
        for i in indexes:
            if len(picked) >= limit:
                break
            picked.add(i)
        return _outcome(candidates, picked, {}, [], meta)

    relevance = _relevances(candidates, pinned)
    dropped: dict[int, str] = {}
    chosen: set[int] = set()
    # Fingerprints of the selected set, for the floor phase.
    fingerprints: set[str] = set()
    # Max similarity of every candidate to the selected set, updated as picks are made.
    max_sim = np.zeros(len(candidates))

    def absorb(index: int) -> None:
        chosen.add(index)
        fingerprint = candidates[index].fingerprint
        if fingerprint is not None:
            fingerprints.add(fingerprint)
        picked = vectors[index]
        if picked is None:
            return
        for other in indexes:
            vector = vectors[other]
            if vector is not None and other not in chosen:
                max_sim[other] = max(max_sim[other], float(vector @ picked))

    for index in pinned_idx:
        absorb(index)

    # Stage 1: containment. Pinned candidates are exempt.
    seen = [i for i in indexes if candidates[i].key in history_seen and i not in chosen]
    pool = [i for i in indexes if i not in chosen and candidates[i].key not in history_seen]

    # Stage 2: exact fingerprints, highest-ranked occurrence wins (pinned ones rank first).
    kept_fingerprints = set(fingerprints)
    unique: list[int] = []
    for i in pool:
        fingerprint = candidates[i].fingerprint
        if fingerprint is not None and fingerprint in kept_fingerprints:
            dropped[i] = DROP_EXACT_DUPLICATE
            continue
        if fingerprint is not None:
            kept_fingerprints.add(fingerprint)
        unique.append(i)

    # Stages 3 and 4, greedy: drop near-duplicates of the selected set, then pick by MMR.
    remaining = list(unique)
    while remaining and len(chosen) < limit:
        still: list[int] = []
        for i in remaining:
            if vectors[i] is not None and chosen and max_sim[i] >= threshold:
                dropped[i] = DROP_NEAR_DUPLICATE
            else:
                still.append(i)
        remaining = still
        if not remaining:
            break
        best = max(remaining, key=lambda i: (lam * relevance[i] - (1 - lam) * max_sim[i], -i))
        remaining.remove(best)
        absorb(best)

    # The floor: readmit the highest-ranked repeats, still without duplicating a pick.
    readmitted: list[int] = []
    for i in seen:
        if len(chosen) >= limit:
            break
        fingerprint = candidates[i].fingerprint
        duplicate = fingerprint is not None and fingerprint in fingerprints
        near = vectors[i] is not None and bool(chosen) and max_sim[i] >= threshold
        if not (duplicate or near):
            readmitted.append(i)
            absorb(i)
    for i in seen:
        if i not in chosen:
            dropped[i] = DROP_ALREADY_SEEN

    reasons = list(dropped.values())
    meta["dropped_near_duplicates"] = reasons.count(DROP_NEAR_DUPLICATE)
    meta["dropped_exact_duplicates"] = reasons.count(DROP_EXACT_DUPLICATE)
    meta["dropped_already_seen"] = reasons.count(DROP_ALREADY_SEEN)
    meta["readmitted_already_seen"] = len(readmitted)
    return _outcome(candidates, chosen, dropped, readmitted, meta)


def _outcome(
    candidates: Sequence[Candidate[T]],
    chosen: Collection[int],
    dropped: dict[int, str],
    readmitted: list[int],
    meta: dict[str, Any],
) -> DiversityOutcome[T]:
    selected = [candidates[i] for i in range(len(candidates)) if i in chosen]
    meta["selected"] = len(selected)
    return DiversityOutcome(
        selected=selected,
        unpicked=[candidates[i] for i in range(len(candidates)) if i not in chosen],
        dropped={candidates[i].key: reason for i, reason in dropped.items()},
        readmitted=[candidates[i].key for i in readmitted],
        meta=meta,
    )
