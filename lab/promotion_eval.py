"""Promotion-quality eval (spec "Confidence threshold + promotion-quality eval").

Scores the compiler against a labeled dataset of sessions: each expected fact carries keyword
groups, and a predicted memory matches a fact when, for every group, at least one of the
group's alternatives occurs (case-insensitively, as a substring) in the predicted text.
Predictions are the candidates that pass the real confidence gate; they are matched to facts
greedily and one-to-one, most confident first, each taking the first unmatched fact (in
label order) it satisfies. precision = matched predictions / predictions, recall = matched
facts / facts.

The scoring half of this module is pure. ``run_eval`` feeds every session through the real
compile path (store the turns as session memory under the reserved eval subject, read them
back through the scope-enforced history, drop recalled context, window, compile, gate)
inside a transaction that is always rolled back, so the eval can never leave a row behind.
It never calls ``promotion_persist`` and it never gates promotion: it is calibration only.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import unit_of_work
from apps.extraction.promotion.compiler import (
    CompileFailed,
    compile_turns,
    is_recalled_context,
    turn_window,
)
from apps.extraction.promotion.types import EVAL_SUBJECT_ID, Candidate, Turn
from apps.memory.models import SESSION_ID_MAX_LENGTH, SessionRole
from apps.memory.selectors import session_history
from apps.memory.services import SessionTurnDraft, confidence_gate, session_append_many
from apps.providers.llm import LLMConfig
from apps.tenancy.services import tenant_create

DEFAULT_DATASET_PATH = Path(__file__).resolve().parent / "eval_data" / "dataset_v1.json"
#: The eval's turns live for at most this long; in practice they are rolled back at once.
EVAL_TURN_TTL_SECONDS = 3_600
#: Sessions labeled with no expected facts (injection attempts, chit-chat, …) are reported
#: in their own section: any prediction there is a false positive.
NOTHING_DURABLE = "nothing_durable"


class DatasetError(ValueError):
    """The dataset file is missing, not JSON, or not in the documented shape."""


# ----------------------------------------------------------------------------- dataset


@dataclass(frozen=True)
class ExpectedFact:
    text: str
    match: tuple[tuple[str, ...], ...]

    def matches(self, predicted: str) -> bool:
        lowered = predicted.lower()
        return all(any(keyword in lowered for keyword in group) for group in self.match)


@dataclass(frozen=True)
class EvalTurn:
    role: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalSession:
    id: str
    domain: str
    turns: tuple[EvalTurn, ...]
    expected: tuple[ExpectedFact, ...]

    @property
    def nothing_durable(self) -> bool:
        return not self.expected


@dataclass(frozen=True)
class Dataset:
    version: int
    sessions: tuple[EvalSession, ...]

    @property
    def fact_count(self) -> int:
        return sum(len(session.expected) for session in self.sessions)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise DatasetError(message)


def _fact(raw: Any, where: str) -> ExpectedFact:
    _require(isinstance(raw, dict), f"{where}: an expected fact must be an object")
    text, match = raw.get("text"), raw.get("match")
    _require(isinstance(text, str) and bool(text.strip()), f"{where}: text must be a string")
    _require(isinstance(match, list) and bool(match), f"{where}: match must be a non-empty list")
    groups: list[tuple[str, ...]] = []
    for group in match:
        _require(
            isinstance(group, list)
            and bool(group)
            and all(isinstance(word, str) and word.strip() for word in group),
            f"{where}: each match group must be a non-empty list of keywords",
        )
        groups.append(tuple(word.lower() for word in group))
    return ExpectedFact(text=text, match=tuple(groups))


def _turn(raw: Any, where: str) -> EvalTurn:
    _require(isinstance(raw, dict), f"{where}: a turn must be an object")
    role, content, metadata = raw.get("role"), raw.get("content"), raw.get("metadata", {})
    _require(role in SessionRole.values, f"{where}: role must be one of {SessionRole.values}")
    _require(isinstance(content, str) and bool(content), f"{where}: content must be a string")
    _require(isinstance(metadata, dict), f"{where}: metadata must be an object")
    return EvalTurn(role=str(role), content=str(content), metadata=dict(metadata))


def parse_dataset(document: Any) -> Dataset:
    """The dataset in ``document`` (already JSON-decoded); raises ``DatasetError``."""
    _require(isinstance(document, dict), "the dataset must be a JSON object")
    version, raw_sessions = document.get("version"), document.get("sessions")
    _require(isinstance(version, int) and not isinstance(version, bool), "version must be an int")
    _require(isinstance(raw_sessions, list) and bool(raw_sessions), "sessions must be a list")
    sessions: list[EvalSession] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_sessions):
        _require(isinstance(raw, dict), f"sessions[{index}] must be an object")
        session_id, domain = raw.get("id"), raw.get("domain")
        where = f"session {session_id!r}"
        _require(isinstance(session_id, str) and bool(session_id), f"sessions[{index}]: id")
        _require(session_id not in seen, f"{where}: duplicate id")
        _require(isinstance(domain, str) and bool(domain), f"{where}: domain must be a string")
        turns, expected = raw.get("turns"), raw.get("expected")
        _require(isinstance(turns, list) and bool(turns), f"{where}: turns must be a list")
        _require(isinstance(expected, list), f"{where}: expected must be a list")
        seen.add(session_id)
        sessions.append(
            EvalSession(
                id=session_id,
                domain=domain,
                turns=tuple(_turn(turn, f"{where} turn {i}") for i, turn in enumerate(turns)),
                expected=tuple(_fact(fact, f"{where} fact {i}") for i, fact in enumerate(expected)),
            )
        )
    return Dataset(version=version, sessions=tuple(sessions))


def load_dataset(path: Path | str = DEFAULT_DATASET_PATH) -> Dataset:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise DatasetError(f"{path} is not valid JSON: {exc}") from exc
    return parse_dataset(document)


# ----------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class SessionScore:
    session_id: str
    domain: str
    nothing_durable: bool
    facts: int
    #: Gated predictions in gate order (most confident first).
    predictions: tuple[Candidate, ...]
    #: (prediction text, fact text) for every match.
    matches: tuple[tuple[str, str], ...]
    false_positives: tuple[str, ...]
    missed: tuple[str, ...]

    @property
    def matched(self) -> int:
        return len(self.matches)


def score_session(session: EvalSession, predictions: Sequence[Candidate]) -> SessionScore:
    """Greedy one-to-one matching of ``predictions`` (already gated, in gate order)."""
    unmatched = list(range(len(session.expected)))
    matches: list[tuple[str, str]] = []
    false_positives: list[str] = []
    for candidate in predictions:
        hit = next((i for i in unmatched if session.expected[i].matches(candidate.text)), None)
        if hit is None:
            false_positives.append(candidate.text)
            continue
        unmatched.remove(hit)
        matches.append((candidate.text, session.expected[hit].text))
    return SessionScore(
        session_id=session.id,
        domain=session.domain,
        nothing_durable=session.nothing_durable,
        facts=len(session.expected),
        predictions=tuple(predictions),
        matches=tuple(matches),
        false_positives=tuple(false_positives),
        missed=tuple(session.expected[i].text for i in unmatched),
    )


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


@dataclass(frozen=True)
class Totals:
    sessions: int
    facts: int
    predicted: int
    matched: int

    @property
    def precision(self) -> float | None:
        """Matched predictions / predictions; None when nothing was predicted."""
        return _ratio(self.matched, self.predicted)

    @property
    def recall(self) -> float | None:
        """Matched facts / facts; None when there was nothing to find."""
        return _ratio(self.matched, self.facts)

    @property
    def f1(self) -> float | None:
        precision, recall = self.precision, self.recall
        if precision is None or recall is None:
            return None
        if precision + recall == 0:
            return 0.0
        return round(2 * precision * recall / (precision + recall), 4)

    @classmethod
    def of(cls, scores: Iterable[SessionScore]) -> Totals:
        scores = list(scores)
        return cls(
            sessions=len(scores),
            facts=sum(score.facts for score in scores),
            predicted=sum(len(score.predictions) for score in scores),
            matched=sum(score.matched for score in scores),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "facts": self.facts,
            "predicted": self.predicted,
            "matched": self.matched,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


@dataclass(frozen=True)
class EvalReport:
    provider: str
    dataset_version: int
    confidence_threshold: float
    max_candidates: int
    scores: tuple[SessionScore, ...]
    #: Sessions whose compile failed (provider down …): id → reason. Not scored.
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def overall(self) -> Totals:
        return Totals.of(self.scores)

    @property
    def by_domain(self) -> dict[str, Totals]:
        domains = sorted({score.domain for score in self.scores})
        return {d: Totals.of(s for s in self.scores if s.domain == d) for d in domains}

    @property
    def nothing_durable(self) -> dict[str, Any]:
        junk = [score for score in self.scores if score.nothing_durable]
        noisy = [score for score in junk if score.predictions]
        return {
            "sessions": len(junk),
            "sessions_with_predictions": len(noisy),
            "predictions": sum(len(score.predictions) for score in noisy),
            "session_ids": [score.session_id for score in noisy],
        }

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "provider": self.provider,
            "dataset_version": self.dataset_version,
            "confidence_threshold": self.confidence_threshold,
            "max_candidates": self.max_candidates,
            "overall": self.overall.as_dict(),
            "by_domain": {domain: t.as_dict() for domain, t in self.by_domain.items()},
            NOTHING_DURABLE: self.nothing_durable,
            "failed": dict(self.failed),
        }
        if verbose:
            data["sessions"] = [
                {
                    "id": score.session_id,
                    "domain": score.domain,
                    "facts": score.facts,
                    "predictions": [
                        {"text": c.text, "confidence": c.confidence, "kind": c.kind}
                        for c in score.predictions
                    ],
                    "matches": [{"predicted": p, "fact": f} for p, f in score.matches],
                    "false_positives": list(score.false_positives),
                    "missed": list(score.missed),
                }
                for score in self.scores
            ]
        return data

    def telemetry(self) -> tuple[dict[str, float], dict[str, Any]]:
        """(measurements, metadata) for the ``memory_promotion.eval`` event."""
        overall = self.overall
        measurements: dict[str, float] = {
            "sessions": overall.sessions,
            "facts": overall.facts,
            "predicted": overall.predicted,
            "matched": overall.matched,
            "nothing_durable_sessions_with_predictions": self.nothing_durable[
                "sessions_with_predictions"
            ],
            "failed_sessions": len(self.failed),
        }
        for name in ("precision", "recall", "f1"):
            value = getattr(overall, name)
            if value is not None:
                measurements[name] = value
        metadata = {
            "provider": self.provider,
            "dataset_version": self.dataset_version,
            "confidence_threshold": self.confidence_threshold,
            "max_candidates": self.max_candidates,
            "by_domain": {domain: t.as_dict() for domain, t in self.by_domain.items()},
        }
        return measurements, metadata


# ----------------------------------------------------------------------------- running


def eval_session_id(index: int, session: EvalSession) -> str:
    return f"eval-{index}-{session.id}"[:SESSION_ID_MAX_LENGTH]


def stored_session_turns(session: EvalSession, *, index: int) -> list[Turn]:
    """The compile input for ``session``, produced by the same path real promotion uses.

    A throwaway tenant is created, the turns are appended as session memory under the
    reserved eval subject, read back through the scope-enforced ``session_history``, stripped
    of recalled context and windowed. All of it happens inside a transaction that is rolled
    back before returning, so the tenant and its turns never outlive this call, even if the
    process dies half-way; the LLM (if any) is called afterwards, outside any transaction.
    """
    session_id = eval_session_id(index, session)
    with unit_of_work():
        tenant = tenant_create(
            slug=f"promotion-eval-{secrets.token_hex(6)}", name="promotion eval (throwaway)"
        )
        session_append_many(
            tenant=tenant,
            subject_id=EVAL_SUBJECT_ID,
            drafts=[
                SessionTurnDraft(
                    session_id=session_id,
                    content=turn.content,
                    role=turn.role,
                    metadata=turn.metadata,
                    ttl_seconds=EVAL_TURN_TTL_SECONDS,
                )
                for turn in session.turns
            ],
        )
        rows = []
        offset: int | None = 0
        while offset is not None:  # a page is bounded in turns and bytes
            page = session_history(
                tenant=tenant, subject_id=EVAL_SUBJECT_ID, session_id=session_id, offset=offset
            )
            rows.extend(page.results)
            offset = page.next_offset
        transaction.set_rollback(True, using=PRIMARY)
    return turn_window(
        [
            Turn(role=row.role, content=row.content)
            for row in rows
            if not is_recalled_context(row.metadata)
        ]
    )


def run_eval(
    dataset: Dataset,
    *,
    llm: LLMConfig,
    on_session: Callable[[SessionScore], None] | None = None,
) -> EvalReport:
    """Compile every session of ``dataset``, gate the candidates exactly as promotion does
    (``PROMOTION_CONFIDENCE_THRESHOLD``, ``PROMOTION_MAX_CANDIDATES``) and score them.
    Never writes a memory."""
    scores: list[SessionScore] = []
    failed: dict[str, str] = {}
    for index, session in enumerate(dataset.sessions):
        turns = stored_session_turns(session, index=index)
        try:
            candidates = compile_turns(turns, llm=llm)
        except CompileFailed as exc:
            failed[session.id] = exc.reason
            continue
        score = score_session(session, confidence_gate(candidates))
        scores.append(score)
        if on_session is not None:
            on_session(score)
    return EvalReport(
        provider=llm.provider,
        dataset_version=dataset.version,
        confidence_threshold=settings.PROMOTION_CONFIDENCE_THRESHOLD,
        max_candidates=settings.PROMOTION_MAX_CANDIDATES,
        scores=tuple(scores),
        failed=failed,
    )
