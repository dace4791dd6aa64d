"""Turn a session's turns into candidates: window, fingerprint, LLM (or heuristic), parser."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from django.conf import settings

from apps.memory.promotion.parser import parse_candidates
from apps.memory.promotion.prompt import JSON_SCHEMA, SCHEMA_NAME, SYSTEM_PROMPT, build_user_prompt
from apps.memory.promotion.types import RECALLED_CONTEXT_KEY, Candidate, Turn
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


def compile_turns(turns: Sequence[Turn], *, llm: LLMConfig) -> list[Candidate]:
    """Candidates for ``turns`` (already windowed and stripped of recalled context)."""
    if not turns:
        return []
    if llm.provider == "heuristic":
        from apps.memory.promotion.heuristic import extract_candidates

        return extract_candidates(turns)
    try:
        raw = complete_json(
            llm,
            system=SYSTEM_PROMPT,
            user=build_user_prompt(turns),
            json_schema=JSON_SCHEMA,
            schema_name=SCHEMA_NAME,
        )
    except LLMUnavailable as exc:
        raise CompileFailed(exc.reason) from exc
    return _with_window_provenance(parse_candidates(raw), turns)
