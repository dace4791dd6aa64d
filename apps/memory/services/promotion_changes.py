"""Facts that change, decided by the compiler model where one is configured.

The offline detector (:mod:`apps.memory.services.changes`) reads a change only where a rule
knows how it is said. A tenant that promotes with a model has it decide instead: once per
promotion, before the write's transaction (a network call never runs under the subject's
lock), the model is shown the statements about to be stored and the subject's live memories
nearest each of them, and names which it puts out of date. The service then applies that
under the detector's own precedence (``memory_apply_change_decisions``): the later fact wins,
a promoted statement never retires an explicit memory, and a pair that cannot be ordered is
flagged. If the model cannot be reached or its reply cannot be read, the offline rules decide,
as they do for every other write.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.telemetry import emit
from apps.extraction.promotion.decisions import (
    DECISION_SCHEMA,
    DECISION_SCHEMA_NAME,
    DECISION_SYSTEM_PROMPT,
    UPDATES,
    Dated,
    build_decision_prompt,
    parse_decisions,
)
from apps.extraction.promotion.types import Candidate
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from apps.providers.llm import LLMConfig, LLMUnavailable, complete_json
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class StatementChanges:
    """What the model said of one statement: the live memories it updates or contradicts."""

    updates: tuple[uuid.UUID, ...] = field(default_factory=tuple)
    contradicts: tuple[uuid.UUID, ...] = field(default_factory=tuple)


def _nearest_known(
    *, tenant: Tenant, subject_id: str, candidates: Sequence[Candidate]
) -> list[Memory]:
    """The subject's live memories nearest each statement, as recall finds them, in order of
    first appearance, at most ``PROMOTION_CHANGES_KNOWN_MAX``."""
    known: dict[uuid.UUID, Memory] = {}
    for candidate in candidates:
        found = memory_recall(
            tenant=tenant,
            subject_id=subject_id,
            query=candidate.text[: settings.MEMORY_QUERY_MAX_CHARS],
            limit=settings.PROMOTION_CHANGES_KNOWN_PER_STATEMENT,
        )
        for hit in found.results:
            known.setdefault(hit.memory.pk, hit.memory)
    return list(known.values())[: settings.PROMOTION_CHANGES_KNOWN_MAX]


def promotion_change_decisions(
    *, tenant: Tenant, subject_id: str, candidates: Sequence[Candidate], llm: LLMConfig
) -> dict[int, StatementChanges] | None:
    """The model's word per statement (by its index in ``candidates``); ``None`` when the
    offline rules decide: no model is configured, the switch is off, or the model could not
    be asked or read."""
    if llm.provider == "heuristic" or not settings.PROMOTION_MODEL_DECIDES_CHANGES:
        return None
    if not candidates:
        return {}
    known = _nearest_known(tenant=tenant, subject_id=subject_id, candidates=candidates)
    if not known:
        return {}  # nothing stored to change
    metadata = {"tenant_id": str(tenant.pk)}
    try:
        raw = complete_json(
            llm,
            system=DECISION_SYSTEM_PROMPT,
            user=build_decision_prompt(
                new=[Dated(text=c.text, at=c.occurred_at) for c in candidates],
                existing=[Dated(text=m.text, at=m.valid_from) for m in known],
            ),
            json_schema=DECISION_SCHEMA,
            schema_name=DECISION_SCHEMA_NAME,
        )
    except LLMUnavailable as exc:
        emit("memory_change.model_unavailable", {"count": 1}, {**metadata, "reason": exc.reason})
        return None
    decisions = parse_decisions(raw, new_count=len(candidates), existing_count=len(known))
    if decisions is None:
        emit("memory_change.model_unreadable", {"count": 1}, metadata)
        return None
    updates: dict[int, list[uuid.UUID]] = {}
    contradicts: dict[int, list[uuid.UUID]] = {}
    for decision in decisions:
        named = updates if decision.relation == UPDATES else contradicts
        named.setdefault(decision.new, []).append(known[decision.existing].pk)
    return {
        index: StatementChanges(
            updates=tuple(updates.get(index, ())), contradicts=tuple(contradicts.get(index, ()))
        )
        for index in range(len(candidates))
        if index in updates or index in contradicts
    }
