"""LoCoMo (Maharana et al., ACL 2024) as a memory-recall benchmark: pure functions only.

Loading, evidence normalisation, the LoCoMo-specific memory formatting and the metrics live
here; ``manage.py recall_eval`` only writes memories, asks questions and prints. The dataset
is CC BY-NC 4.0: it is read from ``../shared/datasets/`` at run time and never copied into
this repository (``/work/shared/datasets/README.md``, "Turning LoCoMo into an Engram
retrieval benchmark", fixes the protocol followed here).

Protocol ("mode A", the paper's "Dialog" rows): every turn is one memory with text
``"{speaker}: {text}"`` (plus ``" [shares {blip_caption}]"``); every category 1-4 question with
at least one valid evidence id is asked verbatim; ``recall@k = |E ∩ R_k| / |E|``.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

#: The integer ``category`` in the file, which is NOT the paper's column order.
CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}
ADVERSARIAL_CATEGORY = 5
DEFAULT_KS = (5, 10, 25, 50)
SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
#: The paper's DRAGON "Dialog" retriever, re-weighted to categories 1-4 (datasets README).
DRAGON_CATEGORIES_1_TO_4 = {5: 0.604, 10: 0.696, 25: 0.797, 50: 0.856}
#: Turns on each side of a turn that form its retrieval context (see :func:`turn_context`).
DEFAULT_CONTEXT_TURNS = 2
#: How memories are written. ``client``: each turn as a client writes it, its session in
#: metadata, so the service threads it (text and metadata, nothing else); ``unthreaded``: the
#: same turns with their dia_id and session date only, no session key, so the service links
#: nothing; ``neighbours``: the threaded turns plus a loader-made ``context`` of the session
#: date and the neighbouring turns, which no client sends; ``facts``: LoCoMo's generated
#: observations, one short fact per memory, written one call each, without a session key.
LOADER_CLIENT = "client"
LOADER_UNTHREADED = "unthreaded"
LOADER_NEIGHBOURS = "neighbours"
LOADER_FACTS = "facts"
LOADERS = (LOADER_CLIENT, LOADER_UNTHREADED, LOADER_NEIGHBOURS, LOADER_FACTS)
#: The three ways a client writes memories, run together by ``recall_eval --loader all``.
PROTOCOLS = (LOADER_UNTHREADED, LOADER_FACTS, LOADER_CLIENT)
#: Tuning (rules, thresholds, weights) happens on ``dev`` only; ``heldout`` is run to report.
DEV_SPLIT = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44")
HELDOUT_SPLIT = ("conv-47", "conv-48", "conv-49", "conv-50")
SPLITS = {"dev": DEV_SPLIT, "heldout": HELDOUT_SPLIT}

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_EVIDENCE_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    blip_caption: str = ""


@dataclass(frozen=True)
class Session:
    number: int
    date: datetime | None
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    sample_id: str
    question: str
    category: int
    evidence: tuple[str, ...]
    #: The gold answer as text ("" when the file has none).
    answer: str = ""


@dataclass(frozen=True)
class Observation:
    """One of LoCoMo's generated per-session facts, with the turns it was drawn from."""

    session: int
    speaker: str
    text: str
    source_dia_ids: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    skipped_questions: int = 0
    #: (speaker_a, speaker_b): speaker A opens the conversation.
    speakers: tuple[str, str] = ("", "")
    observations: tuple[Observation, ...] = ()

    @property
    def turn_ids(self) -> frozenset[str]:
        return frozenset(turn.dia_id for session in self.sessions for turn in session.turns)


@dataclass(frozen=True)
class MemorySpec:
    """One turn as a memory: its text, retrieval context and metadata (LoCoMo-specific)."""

    text: str
    context: str
    metadata: dict[str, Any]


def parse_session_date(value: str) -> datetime | None:
    try:
        return datetime.strptime(value.strip(), SESSION_DATE_FORMAT)  # noqa: DTZ007 - naive by design
    except (ValueError, AttributeError):
        return None


def normalise_evidence(raw: Iterable[Any], valid_ids: frozenset[str]) -> tuple[str, ...]:
    """Canonical, deduplicated evidence ids that are turns of this conversation, in order.

    Split on ``[;,\\s]+``; accept ``D:?(\\d+):0*(\\d+)`` as ``D<s>:<t>`` ("D:11:26" → "D11:26",
    "D30:05" → "D30:5"); drop anything else ("D") and ids that name no turn.
    """
    found: list[str] = []
    for item in raw:
        for token in _EVIDENCE_SPLIT.split(str(item).strip()):
            match = _EVIDENCE_ID.match(token)
            if match is None:
                continue
            canonical = f"D{int(match.group(1))}:{int(match.group(2))}"
            if canonical in valid_ids and canonical not in found:
                found.append(canonical)
    return tuple(found)


def _sessions(sample: Mapping[str, Any]) -> tuple[Session, ...]:
    conversation = sample["conversation"]
    numbers = sorted(
        int(match.group(1))
        for key in conversation
        if (match := _SESSION_KEY.match(key)) is not None
    )
    sessions = []
    for number in numbers:
        turns = tuple(
            Turn(
                dia_id=str(turn["dia_id"]),
                speaker=str(turn["speaker"]),
                text=str(turn.get("text", "")),
                blip_caption=str(turn.get("blip_caption") or ""),
            )
            for turn in conversation[f"session_{number}"]
        )
        date = parse_session_date(str(conversation.get(f"session_{number}_date_time", "")))
        sessions.append(Session(number=number, date=date, turns=turns))
    return tuple(sessions)


def _observations(sample: Mapping[str, Any], valid_ids: frozenset[str]) -> tuple[Observation, ...]:
    """Every ``observation.session_<N>_observation`` item; the source field may be a dia_id,
    a comma-joined string or a list, normalised like evidence."""
    found = []
    raw_sessions = sample.get("observation") or {}
    for key, by_speaker in raw_sessions.items():
        match = re.match(r"^session_(\d+)_observation$", key)
        if match is None or not isinstance(by_speaker, Mapping):
            continue
        for speaker, items in by_speaker.items():
            for item in items or []:
                if not isinstance(item, list | tuple) or not item:
                    continue
                source = item[1] if len(item) > 1 else []
                found.append(
                    Observation(
                        session=int(match.group(1)),
                        speaker=str(speaker),
                        text=str(item[0]),
                        source_dia_ids=normalise_evidence(
                            source if isinstance(source, list) else [source], valid_ids
                        ),
                    )
                )
    found.sort(key=lambda observation: observation.session)
    return tuple(found)


def parse_conversation(sample: Mapping[str, Any]) -> Conversation:
    """One LoCoMo sample; questions are the scorable ones (category 1-4, ≥1 valid id)."""
    sample_id = str(sample["sample_id"])
    sessions = _sessions(sample)
    valid = frozenset(turn.dia_id for session in sessions for turn in session.turns)
    questions = []
    skipped = 0
    for qa in sample.get("qa", []):
        category = int(qa.get("category", 0))
        if category not in CATEGORY_NAMES:
            continue
        evidence = normalise_evidence(qa.get("evidence") or [], valid)
        if not evidence:
            skipped += 1
            continue
        questions.append(
            Question(
                sample_id=sample_id,
                question=str(qa["question"]),
                category=category,
                evidence=evidence,
                answer=str(qa.get("answer", "")),
            )
        )
    conversation = sample["conversation"]
    return Conversation(
        sample_id=sample_id,
        sessions=sessions,
        questions=tuple(questions),
        skipped_questions=skipped,
        speakers=(str(conversation.get("speaker_a", "")), str(conversation.get("speaker_b", ""))),
        observations=_observations(sample, valid),
    )


def load_locomo(path: Path, *, sample_ids: Sequence[str] = ()) -> list[Conversation]:
    """The conversations in ``path`` (all, or those named, in file order)."""
    with path.open(encoding="utf-8") as handle:
        samples = json.load(handle)
    conversations = [parse_conversation(sample) for sample in samples]
    if sample_ids:
        known = {conversation.sample_id for conversation in conversations}
        unknown = [sample_id for sample_id in sample_ids if sample_id not in known]
        if unknown:
            raise ValueError(f"unknown conversations: {', '.join(unknown)}")
        conversations = [c for c in conversations if c.sample_id in set(sample_ids)]
    return conversations


def turn_text(turn: Turn) -> str:
    text = f"{turn.speaker}: {turn.text}"
    if turn.blip_caption:
        text += f" [shares {turn.blip_caption}]"
    return text


def turn_context(session: Session, index: int, *, turns: int = DEFAULT_CONTEXT_TURNS) -> str:
    """The retrieval context of one turn: its session's date and its neighbouring turns.

    A reply ("Yes, last Tuesday!") is often the evidence for a question phrased like the
    turn before it, so the neighbours are what make it findable. This is the harness's use
    of the general ``MemoryDraft.context`` feature; the service knows nothing of LoCoMo.
    """
    parts = []
    if session.date is not None:
        parts.append(f"{session.date:%d %B %Y}")
    start, stop = max(0, index - turns), min(len(session.turns), index + turns + 1)
    parts.extend(turn_text(session.turns[i]) for i in range(start, stop) if i != index)
    return "\n".join(parts)


def turn_metadata(conversation: Conversation, session: Session, turn: Turn) -> dict[str, Any]:
    return {
        "sample_id": conversation.sample_id,
        "dia_id": turn.dia_id,
        "session": session.number,
        "session_date": session.date.isoformat() if session.date else None,
        "speaker": turn.speaker,
    }


def unthreaded_specs(conversation: Conversation) -> list[MemorySpec]:
    """Every turn as :func:`client_specs` writes it, but with only its dia_id and session date
    in metadata: no session key. The service infers the conversation from the order of the
    writes (docs/memory.md, "Derived context")."""
    return [
        MemorySpec(
            text=turn_text(turn),
            context="",
            metadata={
                "sample_id": conversation.sample_id,
                "dia_id": turn.dia_id,
                "session_date": session.date.isoformat() if session.date else None,
            },
        )
        for session in conversation.sessions
        for turn in session.turns
    ]


def client_specs(conversation: Conversation) -> list[MemorySpec]:
    """Every turn as a client writes it: ``"{speaker}: {text}"`` (the caption of a shared
    image appended), its dia_id, session and session date in metadata, no context."""
    return [
        MemorySpec(text=turn_text(turn), context="", metadata=turn_metadata(conversation, s, turn))
        for s in conversation.sessions
        for turn in s.turns
    ]


def fact_specs(conversation: Conversation) -> list[MemorySpec]:
    """LoCoMo's observations as fact-style memories: one short fact each, with its session's
    date and the turns it was drawn from (``source_dia_ids``) in metadata. No session key: a
    client writing facts one by one rarely sends one, and with it the service would index
    each fact with its session's other facts."""
    dates = {session.number: session.date for session in conversation.sessions}
    specs = []
    for observation in conversation.observations:
        date = dates.get(observation.session)
        specs.append(
            MemorySpec(
                text=observation.text,
                context="",
                metadata={
                    "sample_id": conversation.sample_id,
                    "session_date": date.isoformat() if date else None,
                    "source_dia_ids": list(observation.source_dia_ids),
                },
            )
        )
    return specs


def loader_specs(
    conversation: Conversation, loader: str, *, context_turns: int = DEFAULT_CONTEXT_TURNS
) -> list[MemorySpec]:
    if loader == LOADER_CLIENT:
        return client_specs(conversation)
    if loader == LOADER_UNTHREADED:
        return unthreaded_specs(conversation)
    if loader == LOADER_NEIGHBOURS:
        return memory_specs(conversation, context_turns=context_turns)
    if loader == LOADER_FACTS:
        return fact_specs(conversation)
    raise ValueError(f"unknown loader {loader!r}")


def split_of(sample_id: str) -> str | None:
    return next((name for name, ids in SPLITS.items() if sample_id in ids), None)


def memory_specs(
    conversation: Conversation, *, context_turns: int = DEFAULT_CONTEXT_TURNS
) -> list[MemorySpec]:
    """The ``neighbours`` loader: each turn with a loader-made retrieval context."""
    specs = []
    for session in conversation.sessions:
        for index, turn in enumerate(session.turns):
            specs.append(
                MemorySpec(
                    text=turn_text(turn),
                    context=turn_context(session, index, turns=context_turns)
                    if context_turns >= 0
                    else "",
                    metadata=turn_metadata(conversation, session, turn),
                )
            )
    return specs


# --- metrics -----------------------------------------------------------------------------


#: One retrieved memory: its dia_id (a turn), or the dia_ids it was drawn from (a fact).
Retrieved = str | tuple[str, ...]


@dataclass(frozen=True)
class QuestionResult:
    sample_id: str
    category: int
    evidence: tuple[str, ...]
    retrieved: tuple[Retrieved, ...]
    latency_ms: float = 0.0


def _top(retrieved: Sequence[Retrieved], k: int) -> set[str]:
    """The dia_ids the first ``k`` memories cover (a fact covers all its source turns)."""
    found: set[str] = set()
    for item in retrieved[:k]:
        if isinstance(item, str):
            found.add(item)
        else:
            found.update(item)
    return found


def recall_at(evidence: Sequence[str], retrieved: Sequence[Retrieved], k: int) -> float:
    """``|E ∩ R_k| / |E|`` (the paper's metric: partial credit for multi-evidence)."""
    if not evidence:
        raise ValueError("a question without evidence cannot be scored")
    top = _top(retrieved, k)
    return sum(1 for item in set(evidence) if item in top) / len(set(evidence))


def hit_at(evidence: Sequence[str], retrieved: Sequence[Retrieved], k: int) -> float:
    return 1.0 if set(evidence) & _top(retrieved, k) else 0.0


def complete_at(evidence: Sequence[str], retrieved: Sequence[Retrieved], k: int) -> float:
    return 1.0 if set(evidence) <= _top(retrieved, k) else 0.0


@dataclass
class Metrics:
    count: int = 0
    recall: dict[int, float] = field(default_factory=dict)
    hit: dict[int, float] = field(default_factory=dict)
    complete: dict[int, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "recall": {str(k): round(v, 4) for k, v in self.recall.items()},
            "hit": {str(k): round(v, 4) for k, v in self.hit.items()},
            "complete": {str(k): round(v, 4) for k, v in self.complete.items()},
        }


def _mean_metrics(results: Sequence[QuestionResult], ks: Sequence[int]) -> Metrics:
    metrics = Metrics(count=len(results))
    for k in ks:
        if not results:
            metrics.recall[k] = metrics.hit[k] = metrics.complete[k] = 0.0
            continue
        n = len(results)
        metrics.recall[k] = sum(recall_at(r.evidence, r.retrieved, k) for r in results) / n
        metrics.hit[k] = sum(hit_at(r.evidence, r.retrieved, k) for r in results) / n
        metrics.complete[k] = sum(complete_at(r.evidence, r.retrieved, k) for r in results) / n
    return metrics


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Report:
    ks: tuple[int, ...]
    overall: Metrics
    categories: dict[int, Metrics]
    macro_recall: dict[int, float]
    conversations: dict[str, Metrics]
    latency_p50_ms: float
    latency_p95_ms: float

    def as_dict(self) -> dict[str, Any]:
        spread = (
            {
                str(k): {
                    "min": round(min(m.recall[k] for m in self.conversations.values()), 4),
                    "max": round(max(m.recall[k] for m in self.conversations.values()), 4),
                }
                for k in self.ks
            }
            if self.conversations
            else {}
        )
        return {
            "ks": list(self.ks),
            "overall": self.overall.as_dict(),
            "categories": {
                str(category): {"name": CATEGORY_NAMES[category], **metrics.as_dict()}
                for category, metrics in sorted(self.categories.items())
            },
            "macro_recall": {str(k): round(v, 4) for k, v in self.macro_recall.items()},
            "conversations": {
                sample_id: metrics.as_dict() for sample_id, metrics in self.conversations.items()
            },
            "conversation_recall_spread": spread,
            "latency_ms": {
                "p50": round(self.latency_p50_ms, 2),
                "p95": round(self.latency_p95_ms, 2),
            },
        }


def summarise(results: Sequence[QuestionResult], ks: Sequence[int] = DEFAULT_KS) -> Report:
    """Micro average over every question, per category, macro over categories, per
    conversation, and latency percentiles."""
    ks = tuple(ks)
    by_category: dict[int, list[QuestionResult]] = defaultdict(list)
    by_conversation: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in results:
        by_category[result.category].append(result)
        by_conversation[result.sample_id].append(result)
    categories = {c: _mean_metrics(rs, ks) for c, rs in sorted(by_category.items())}
    macro = {
        k: (sum(m.recall[k] for m in categories.values()) / len(categories)) if categories else 0.0
        for k in ks
    }
    latencies = [result.latency_ms for result in results]
    return Report(
        ks=ks,
        overall=_mean_metrics(results, ks),
        categories=categories,
        macro_recall=macro,
        conversations={s: _mean_metrics(rs, ks) for s, rs in by_conversation.items()},
        latency_p50_ms=percentile(latencies, 0.50),
        latency_p95_ms=percentile(latencies, 0.95),
    )
