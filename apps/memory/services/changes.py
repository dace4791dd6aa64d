"""Facts that change: when a write states a new value for an attribute the subject already
holds a live memory about, the older memory is retired or both are flagged — never kept as
if nothing had happened (helpers, inside the write's transaction, scope lock held).

The offline detector reads claims (``apps.extraction.changes``: "Andrew has no pets", "John lost
his job", "the user lives in Lisbon"), finds the subject's live memories in the same project
partition that share the attribute's words (the keyword postings), and compares claims:

* same entity and attribute, another value, and one became true strictly later
  (``valid_from``): the later one wins. The older memory is superseded by it (its validity ends
  where the later one's begins; ``supersede_reason`` ``changed_value:<attribute>``), whichever
  of the two was written first — a fact written late about the past takes its place in time;
* it is flagged instead (``conflicts_with`` on both, both stay live) when deciding would be a
  guess: both became true at the same time; the older one is an explicit memory and the later
  a promoted one (what promotion inferred never overrides what an agent said); the older
  memory says more than the changed statement (retiring it would hide the rest); or the
  later value is the one the older memory itself replaced (a change back, or an old event told
  again: the two cannot be told apart);
* the same value, or an attribute the rules do not know: nothing happens.

Precision comes first: every rule that reads an attribute declines on hedges, plans and
reported speech, so a fact that did not change is not retired (docs/memory.md, "Facts that
change", has the measured rates).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from apps.core.telemetry import emit
from apps.extraction.changes import Claim, conflict, extract_claims, search_words
from apps.extraction.changes.claims import (
    claim_share,
    frame_claims,
    living_claims,
    phrase_claims,
)
from apps.extraction.changes.patterns import ALIVE, FRAME, HELD, PHRASE, SWITCHED
from apps.memory.models import Memory, MemorySource, SupersedeReason
from apps.memory.selectors import (
    memory_change_candidates,
    memory_live_candidates,
    memory_texts,
)
from apps.memory.services.validity import memory_flag_conflict, memory_retire
from apps.tenancy.models import Tenant


@dataclass
class ChangeOutcome:
    #: (retired id, the id that replaced it, reason)
    superseded: list[tuple[uuid.UUID, uuid.UUID, str]] = field(default_factory=list)
    #: (id, id) pairs flagged as conflicting
    flagged: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)


def _reason(later: Claim, older: Claim) -> str:
    # An end names what it ended by the older claim's attribute: "sold the iPhone" against
    # "the user's phone is an iPhone 12" changed the phone.
    claim = older if later.family != older.family else later
    qualified = ("key", HELD, SWITCHED, PHRASE, FRAME)
    label = claim.attribute.split(":", 1)[1] if claim.family in qualified else claim.family
    return f"{SupersedeReason.CHANGED_VALUE}:{label}"


class _Claims:
    """What each text says, read once per write whichever way it is read."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], list[Claim]] = {}

    def _read(self, text: str, reader: Callable[[str], list[Claim]]) -> list[Claim]:
        key = (text, reader.__name__)
        if key not in self._cache:
            self._cache[key] = reader(text)
        return self._cache[key]

    def of(self, text: str) -> list[Claim]:
        return self._read(text, extract_claims)

    def compared_with(self, text: str, claims: list[Claim]) -> list[Claim]:
        """``text``'s claims, and what it says of each kind where one of ``claims`` is a
        switch ("works night shifts" against "switched to day shifts"), who it names as living
        where one is a death ("a parrot named Kiwi" against "Kiwi died"), and what its verbs
        say where one is told "now" or names what it replaced ("flies with United" against "now
        flies with Delta", "drinks oat milk" against "switched from oat milk to almond milk")."""
        said = list(self.of(text))
        if any(claim.family == SWITCHED for claim in claims):
            said += self._read(text, phrase_claims)
        if any(claim.family == ALIVE for claim in claims):
            said += self._read(text, living_claims)
        if any(claim.family == FRAME or claim.replaced or _tool_moved(claim) for claim in claims):
            said += self._read(text, frame_claims)
        return said


def _tool_moved(claim: Claim) -> bool:
    """A tool told as a move or switch ("switched to Firefox"), which may end what a verb said
    ("browses with Chrome")."""
    return claim.family == "tool" and claim.now


def _changed_back(*, tenant: Tenant, subject_id: str, older: Memory, later: Claim) -> bool:
    """Whether ``later`` states a value the older memory itself replaced."""
    if not older.supersedes:
        return False
    texts = memory_texts(tenant=tenant, subject_id=subject_id, ids=older.supersedes)
    for text in texts.values():
        for claim in extract_claims(text):
            if conflict(claim, later) is False:
                return True
    return False


def _precedence(candidate: Memory, new: Memory) -> tuple[Memory, Memory] | None:
    """``(older, later)`` of two memories that state one attribute's values, when the later
    may retire the older; ``None`` when deciding would be a guess: both became true at the
    same time, or the older is explicit and the later promoted."""
    if new.valid_from == candidate.valid_from:
        return None
    older, later = (candidate, new) if new.valid_from > candidate.valid_from else (new, candidate)
    if older.source == MemorySource.EXPLICIT and later.source == MemorySource.PROMOTED:
        return None
    return older, later


def _decide(
    *,
    tenant: Tenant,
    subject_id: str,
    candidate: Memory,
    new: Memory,
    pairs: list[tuple[Claim, Claim]],
) -> tuple[Memory, Memory, Claim, Claim] | None:
    """``(older, later, the later's claim, the older's)`` when the older memory is retired;
    ``None`` when the two are flagged instead (see the module docstring)."""
    ordered = _precedence(candidate, new)
    if ordered is None:
        return None
    older, later = ordered
    if older is candidate:
        older_claims = [old for old, _ in pairs]
        older_claim, later_claim = pairs[0]
    else:
        older_claims = [ours for _, ours in pairs]
        later_claim, older_claim = pairs[0]
    if claim_share(older.text, older_claims) < settings.MEMORY_CHANGE_MIN_CLAIM_SHARE:
        return None
    if _changed_back(tenant=tenant, subject_id=subject_id, older=older, later=later_claim):
        return None
    return older, later, later_claim, older_claim


def memory_detect_changes(
    *, tenant: Tenant, subject_id: str, memories: Sequence[Memory]
) -> ChangeOutcome:
    """Compare each of the just-inserted ``memories`` with the subject's live memories and
    retire or flag what changed (helper: inside the write's transaction, scope lock held).

    Memories are taken in valid-time order, so a batch that replays history (an import of a
    conversation, a promotion of several sessions' facts) retires each value by the next."""
    outcome = ChangeOutcome()
    if not settings.MEMORY_CHANGE_DETECTION_ENABLED:
        return outcome
    claims = _Claims()
    retired: set[uuid.UUID] = set()
    now = timezone.now()
    order = sorted(range(len(memories)), key=lambda index: (memories[index].valid_from, index))
    for index in order:
        new = memories[index]
        new_claims = claims.of(new.text)
        if not new_claims or new.pk in retired:
            continue
        candidates = memory_change_candidates(
            tenant=tenant,
            subject_id=subject_id,
            project_id=new.project_id,
            words=" ".join(search_words(claim) for claim in new_claims),
            exclude=[new.pk, *retired],
            limit=settings.MEMORY_CHANGE_CANDIDATES,
        )
        # A value that holds after the new one's start is its successor: the nearest first,
        # so a history written out of order ends each value where the next one begins.
        successors = sorted(
            (row for row in candidates if row.valid_from > new.valid_from),
            key=lambda row: row.valid_from,
        )
        earlier = [row for row in candidates if row.valid_from <= new.valid_from]
        for found in [*successors, *earlier]:
            pairs = [
                (old, ours)
                for old in claims.compared_with(found.text, new_claims)
                for ours in new_claims
                if conflict(old, ours)
            ]
            if not pairs:
                continue
            rows = memory_live_candidates(tenant=tenant, subject_id=subject_id, ids=[found.pk])
            if not rows:
                continue
            candidate = rows[0]
            decided = _decide(
                tenant=tenant,
                subject_id=subject_id,
                candidate=candidate,
                new=new,
                pairs=pairs,
            )
            if decided is None:
                memory_flag_conflict(
                    tenant=tenant, subject_id=subject_id, first=candidate, second=new
                )
                outcome.flagged.append((candidate.pk, new.pk))
                continue
            older, later, later_claim, older_claim = decided
            reason = _reason(later_claim, older_claim)
            memory_retire(
                tenant=tenant, subject_id=subject_id, old=older, new=later, reason=reason, now=now
            )
            retired.add(older.pk)
            outcome.superseded.append((older.pk, later.pk, reason))
            if older is new:
                break  # the new memory is history already: nothing more to retire by it
    _emit(tenant, outcome)
    return outcome


def memory_apply_change_decisions(
    *,
    tenant: Tenant,
    subject_id: str,
    new: Memory,
    updates: Sequence[uuid.UUID],
    contradicts: Sequence[uuid.UUID],
) -> ChangeOutcome:
    """The compiler model's word on ``new`` (just inserted), in place of the offline rules:
    each live memory it ``updates`` is retired by the later of the two
    (``changed_value:model``), or both are flagged where the detector's precedence would
    (:func:`_precedence`: the same time, or a promoted memory against an explicit one); each it
    ``contradicts`` is flagged with it. Helper: inside the write's transaction, scope lock held;
    a memory retired since the model was asked is left alone."""
    outcome = ChangeOutcome()
    named = [*updates, *contradicts]
    if not named or new.superseded_by_id is not None:
        return outcome
    reason = f"{SupersedeReason.CHANGED_VALUE}:model"
    now = timezone.now()
    for candidate in memory_live_candidates(tenant=tenant, subject_id=subject_id, ids=named):
        if candidate.pk == new.pk:
            continue
        ordered = _precedence(candidate, new) if candidate.pk in updates else None
        if ordered is None:
            memory_flag_conflict(tenant=tenant, subject_id=subject_id, first=candidate, second=new)
            outcome.flagged.append((candidate.pk, new.pk))
            continue
        older, later = ordered
        memory_retire(
            tenant=tenant, subject_id=subject_id, old=older, new=later, reason=reason, now=now
        )
        outcome.superseded.append((older.pk, later.pk, reason))
        if older is new:
            break  # the new memory is history already: nothing more to retire by it
    _emit(tenant, outcome)
    return outcome


def _emit(tenant: Tenant, outcome: ChangeOutcome) -> None:
    if outcome.superseded:
        emit(
            "memory_change.superseded",
            {"count": len(outcome.superseded)},
            {"tenant_id": str(tenant.pk)},
        )
    if outcome.flagged:
        emit(
            "memory_change.flagged", {"count": len(outcome.flagged)}, {"tenant_id": str(tenant.pk)}
        )
