"""Turn a session's turns into candidates: window, fingerprint, LLM (or heuristic), parser."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from django.conf import settings

from apps.extraction.promotion.heuristic.conversation import speakers
from apps.extraction.promotion.heuristic.levels import ADVERSARIAL_TURNS
from apps.extraction.promotion.heuristic.safety import is_injection, looks_secret
from apps.extraction.promotion.parser import parse_candidates
from apps.extraction.promotion.prompt import (
    JSON_SCHEMA,
    SCHEMA_NAME,
    SYSTEM_PROMPT,
    build_user_prompt,
)
from apps.extraction.promotion.types import RECALLED_CONTEXT_KEY, Candidate, Turn
from apps.providers.llm import LLMConfig, LLMUnavailable, complete_json


class CompileFailed(Exception):
    """The compiler could not run (provider down, circuit open). Retry later; the watermark
    is not advanced."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def session_fingerprint(turns: Sequence[tuple[str, str]]) -> str:
    """Content hash of a session's (role, content) turns in order: the promotion watermark."""
    digest = hashlib.sha256()
    for role, content in turns:
        for part in (role, content):
            encoded = part.encode("utf-8")
            digest.update(len(encoded).to_bytes(8, "big"))
            digest.update(encoded)
    return digest.hexdigest()


def is_recalled_context(metadata: object) -> bool:
    return isinstance(metadata, dict) and bool(metadata.get(RECALLED_CONTEXT_KEY))


def turn_window(turns: Sequence[Turn]) -> list[Turn]:
    """The most recent turns that fit the window (turn count and characters)."""
    window: list[Turn] = []
    budget = settings.PROMOTION_WINDOW_MAX_CHARS
    for turn in reversed(turns[-settings.PROMOTION_WINDOW_MAX_TURNS :]):
        budget -= len(turn.content)
        if budget < 0 and window:
            break
        window.append(turn)
    window.reverse()
    return window


def compiler_name(llm: LLMConfig) -> str:
    """What a promoted memory records as its compiler: the provider, and the model if any."""
    return (
        f"{llm.provider}/{llm.model}" if llm.provider != "heuristic" and llm.model else llm.provider
    )


def _with_window_provenance(candidates: list[Candidate], turns: Sequence[Turn]) -> list[Candidate]:
    """A model's candidates name no turns: each is attributed to the whole window, and
    happened no later than the window's last turn."""
    seqs = tuple(turn.seq for turn in turns if turn.seq is not None)
    times = [turn.occurred_at for turn in turns if turn.occurred_at is not None]
    last = max(times) if times else None
    return [
        replace(c, source_seqs=c.source_seqs or seqs, occurred_at=c.occurred_at or last)
        for c in candidates
    ]


def _screened(turns: Sequence[Turn]) -> list[Turn] | None:
    """The turns a model may read, by the heuristic's own rule: a turn of a speaking role that
    tries to instruct the system is left out whole, and a session with ``ADVERSARIAL_TURNS``
    such turns is not compiled at all (``None``)."""
    # In a conversation between named people both sides speak for themselves.
    spoken = ("user", "fact", "assistant") if speakers(turns) is not None else ("user", "fact")
    injected = [turn.role in spoken and is_injection(turn.content) for turn in turns]
    if sum(injected) >= ADVERSARIAL_TURNS:
        return None
    return [turn for turn, dropped in zip(turns, injected, strict=True) if not dropped]


def safe_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Every compiler's candidates without the ones that carry a secret or try to instruct
    the system: the heuristic's sentence filters, applied to what any compiler proposes. A
    model can paraphrase a secret out of a turn or write an instruction of its own, so its
    output is filtered like a transcript sentence: dropped, never redacted and kept."""
    return [c for c in candidates if not looks_secret(c.text) and not is_injection(c.text)]


def compile_turns(turns: Sequence[Turn], *, llm: LLMConfig) -> list[Candidate]:
    """Candidates for ``turns`` (already windowed and stripped of recalled context), through
    the same safety filters whichever compiler runs (:func:`safe_candidates`)."""
    if not turns:
        return []
    if llm.provider == "heuristic":
        from apps.extraction.promotion.heuristic import extract_candidates

        return safe_candidates(extract_candidates(turns))
    screened = _screened(turns)
    if not screened:
        # Adversarial (or nothing left to read): no model call is spent on it.
        return []
    try:
        raw = complete_json(
            llm,
            system=SYSTEM_PROMPT,
            user=build_user_prompt(screened),
            json_schema=JSON_SCHEMA,
            schema_name=SCHEMA_NAME,
        )
    except LLMUnavailable as exc:
        raise CompileFailed(exc.reason) from exc
    return safe_candidates(_with_window_provenance(parse_candidates(raw), screened))
