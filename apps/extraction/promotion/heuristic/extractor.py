"""The public entry point, :func:`extract_candidates`, and the session-level merge.

Drops injected turns (and the whole session when it is adversarial), collects the scored
statements turn by turn, then removes statements contradicted by a later correction and
merges near-duplicates and restatements before returning candidates in session order.
"""

from __future__ import annotations

from collections.abc import Sequence

from apps.extraction.promotion.heuristic.conversation import conversation_candidates, speakers
from apps.extraction.promotion.heuristic.levels import (
    ADVERSARIAL_TURNS,
    NEAR_DUPLICATE_JACCARD,
    RESTATEMENT_JACCARD,
    SUPERSEDE_JACCARD,
)
from apps.extraction.promotion.heuristic.patterns import _NEGATED_VALUE
from apps.extraction.promotion.heuristic.profile import profile_candidates
from apps.extraction.promotion.heuristic.safety import is_injection
from apps.extraction.promotion.heuristic.scoring import _Statement, _turn_statements
from apps.extraction.promotion.heuristic.similarity import _jaccard, _stem, _tokens
from apps.extraction.promotion.types import Candidate, Turn


def _superseded(statements: list[_Statement]) -> list[_Statement]:
    """Drop statements contradicted by a later correction in the same session."""
    kept = list(statements)
    for correction in statements:
        if correction.kind != "correction":
            continue
        negated = {
            _stem(value.lower().rstrip(".,")) for value in _NEGATED_VALUE.findall(correction.text)
        }
        corrected = _tokens(correction.text)
        kept = [
            statement
            for statement in kept
            if statement.position >= correction.position
            or not (
                negated & _tokens(statement.text)
                or _jaccard(corrected, _tokens(statement.text)) >= SUPERSEDE_JACCARD
            )
        ]
    return kept


def _restated(statement: _Statement, statements: list[_Statement]) -> bool:
    """An acknowledgement that repeats something the user said in the turn just before."""
    if not statement.acknowledgement:
        return False
    tokens = _tokens(statement.text)
    return any(
        other.position[0] == statement.position[0] - 1
        and _jaccard(tokens, _tokens(other.text)) >= RESTATEMENT_JACCARD
        for other in statements
    )


def _deduplicated(statements: list[_Statement]) -> list[_Statement]:
    """Merge near-identical statements, keeping the most confident (earliest on a tie)."""
    kept: list[_Statement] = []
    for statement in statements:
        if _restated(statement, statements):
            continue
        tokens = _tokens(statement.text)
        for index, other in enumerate(kept):
            if _jaccard(tokens, _tokens(other.text)) >= NEAR_DUPLICATE_JACCARD:
                if statement.confidence > other.confidence:
                    kept[index] = statement
                break
        else:
            kept.append(statement)
    return kept


def extract_candidates(turns: Sequence[Turn]) -> list[Candidate]:
    """Durable statements in ``turns`` with a rule-based confidence, in session order."""
    names = speakers(turns)
    # In a conversation between named people both sides speak for themselves.
    spoken = ("user", "fact", "assistant") if names is not None else ("user", "fact")
    injected = {
        index
        for index, turn in enumerate(turns)
        if turn.role in spoken and is_injection(turn.content)
    }
    if len(injected) >= ADVERSARIAL_TURNS:
        return []
    profile = profile_candidates(turns, names=names, injected=injected)
    if names is not None:
        return _with_profile(
            conversation_candidates(turns, names=names, injected=injected), profile
        )
    statements: list[_Statement] = []
    answered_question = False
    for index, turn in enumerate(turns):
        if turn.role == "system" or index in injected:
            continue
        if turn.role in ("user", "fact", "assistant"):
            statements.extend(
                _turn_statements(turn, index=index, answered_question=answered_question)
            )
        if turn.role == "assistant":
            answered_question = turn.content.rstrip().endswith("?")
    return _with_profile(
        [
            _candidate(statement, turns[statement.position[0]])
            for statement in _deduplicated(_superseded(statements))
        ],
        profile,
    )


def _told_as_clauses(candidate: Candidate, profile: list[Candidate]) -> bool:
    """Whether the profile rules told ``candidate``'s sentence as several facts of its turn
    ("The user's knee has healed and the user is back to running": two), which together say
    what it says."""
    clauses = [fact for fact in profile if fact.source_seqs == candidate.source_seqs]
    if len(clauses) < 2:
        return False
    said = set().union(*(_tokens(fact.text) for fact in clauses))
    return _jaccard(_tokens(candidate.text), said) >= NEAR_DUPLICATE_JACCARD


def _with_profile(candidates: list[Candidate], profile: list[Candidate]) -> list[Candidate]:
    """The sentence rules' candidates, then each profile fact none of them (nor an earlier
    profile fact) already says. A sentence the profile rules split into facts is kept as
    those facts alone, so each can change on its own without retiring the others."""
    kept = [candidate for candidate in candidates if not _told_as_clauses(candidate, profile)]
    for fact in profile:
        tokens = _tokens(fact.text)
        if all(_jaccard(tokens, _tokens(other.text)) < NEAR_DUPLICATE_JACCARD for other in kept):
            kept.append(fact)
    return kept


def _candidate(statement: _Statement, turn: Turn) -> Candidate:
    return Candidate(
        text=statement.text,
        confidence=statement.confidence,
        kind=statement.kind,
        source_seqs=(turn.seq,) if turn.seq is not None else (),
        occurred_at=turn.occurred_at,
    )
