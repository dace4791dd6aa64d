from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX

#: Turns whose metadata carries this flag were injected recall context (memories or articles
#: handed back to the agent). They are excluded from compilation so recalled memories are
#: never re-extracted as new facts.
RECALLED_CONTEXT_KEY = "recalled_context"

#: The reserved subject the promotion eval runs under. The sweep skips it and
#: ``promotion_persist`` refuses it, so eval turns can never become durable memories.
#: API keys cannot take a reserved agent_id, so no caller can act as it.
EVAL_SUBJECT_ID = f"{RESERVED_SUBJECT_PREFIX}promotion-eval"

CANDIDATE_KINDS = ("preference", "decision", "fact", "correction")


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    #: The stored turn's seq (provenance of what is compiled from it); None outside storage.
    seq: int | None = None
    #: When the turn was said: the anchor for relative dates ("yesterday").
    occurred_at: datetime | None = None


@dataclass(frozen=True)
class Candidate:
    """A durable statement proposed by the compiler, before the confidence gate."""

    text: str
    confidence: float
    kind: str = "fact"
    cross_links: tuple[str, ...] = field(default_factory=tuple)
    #: Seqs of the turns the statement was compiled from.
    source_seqs: tuple[int, ...] = field(default_factory=tuple)
    #: When the thing happened: a date the compiler resolved, else the turn's time.
    occurred_at: datetime | None = None
