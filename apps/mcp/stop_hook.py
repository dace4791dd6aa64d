"""`engram-promote-hook`: upload a finished agent session and ask Engram to promote it.

Run it from an agent harness when a session ends — e.g. Claude Code's ``Stop`` hook, which
passes ``{"session_id", "transcript_path", ...}`` as JSON on stdin. The hook:

1. reads the transcript (Claude Code JSONL, or a plain JSON list of ``{role, content}``),
2. asks Engram how many of this session's turns it already holds and uploads only the rest
   (the transcript and the session tier are both append-only), and
3. asks Engram to promote the session (the client's ``promote``).

Re-firing is idempotent: nothing new is uploaded, and promotion answers ``unchanged``
without an LLM call; each upload also carries the client's Idempotency-Key, so a retried
batch is stored once. Scope is the configured key's (``ENGRAM_API_KEY``); the hook never sends
a tenant or subject. Exit status: 0 on success, 1 on failure (non-blocking for Claude Code).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from engram_client import Engram, EngramError, NewTurn

BATCH_SIZE = 500
CONTENT_MAX_BYTES = 100 * 1024
DEFAULT_TTL_SECONDS = 24 * 3600
ROLES = {"user", "assistant", "system"}


def _text_of(content: Any) -> str:
    """Plain text of a message: strings as-is, text blocks joined; tool calls are dropped."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(part for part in parts if part)
    return ""


def _cap(text: str) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= CONTENT_MAX_BYTES:
        return text
    return encoded[: CONTENT_MAX_BYTES - 16].decode("utf-8", errors="ignore") + " …[truncated]"


def read_transcript(path: Path) -> list[dict[str, str]]:
    """The conversational turns of a transcript, in order, as ``{role, content}``."""
    raw = path.read_text(encoding="utf-8")
    stripped = raw.lstrip()
    records: Iterator[Any]
    if stripped.startswith("["):
        records = iter(json.loads(stripped))
    else:
        records = (json.loads(line) for line in raw.splitlines() if line.strip())
    turns = []
    for record in records:
        if not isinstance(record, dict) or record.get("isMeta"):
            continue
        message = record.get("message", record)
        if not isinstance(message, dict):
            continue
        role = message.get("role") or record.get("type")
        text = _text_of(message.get("content")).strip()
        if role in ROLES and text:
            turns.append({"role": role, "content": _cap(text)})
    return turns


def upload_and_promote(
    engram: Engram, *, session_id: str, turns: list[dict[str, str]], ttl_seconds: int
) -> dict[str, Any]:
    held = engram.session_history(session_id, limit=1).meta.total_count
    new_turns = turns[held:]
    for start in range(0, len(new_turns), BATCH_SIZE):
        engram.remember_many(
            [
                NewTurn(
                    session_id=session_id,
                    role=turn["role"],
                    content=turn["content"],
                    ttl_seconds=ttl_seconds,
                )
                for turn in new_turns[start : start + BATCH_SIZE]
            ]
        )
    promoted = engram.promote(session_id)
    return {
        "uploaded": len(new_turns),
        "promotion": promoted.model_dump(mode="json", exclude_unset=True),
    }


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        event = json.loads(stdin.read() or "{}")
        session_id = str(event.get("session_id") or "").strip()
        transcript_path = str(event.get("transcript_path") or "").strip()
        if not session_id or not transcript_path:
            raise ValueError("stdin must carry session_id and transcript_path")
        turns = read_transcript(Path(transcript_path).expanduser())
        ttl = int(os.environ.get("ENGRAM_SESSION_TTL_SECONDS", DEFAULT_TTL_SECONDS))
        with Engram() as engram:
            if not engram.options.api_key:
                raise RuntimeError("ENGRAM_API_KEY is not set")
            summary = upload_and_promote(
                engram, session_id=session_id, turns=turns, ttl_seconds=ttl
            )
    except EngramError as exc:
        sys.stderr.write(f"engram-promote-hook: {exc.code}: {exc.message}\n")
        return 1
    except (OSError, ValueError, RuntimeError) as exc:
        sys.stderr.write(f"engram-promote-hook: {exc}\n")
        return 1
    stdout.write(json.dumps({"session_id": session_id, **summary}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
