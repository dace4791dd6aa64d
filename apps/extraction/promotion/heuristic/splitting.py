"""Sentence splitting: a turn's text cut into the sentences the rules score one by one.

Fenced and indented code, quotes, rules and email headers are dropped; bullets and lines are
split; inline code spans and common abbreviations are protected from the sentence split.
"""

from __future__ import annotations

import re

from apps.extraction.promotion.heuristic.levels import _rx

# --- Sentence splitting ------------------------------------------------------------------
_FENCE = re.compile(r"(```|~~~).*?(\1|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_EMAIL_HEADER = _rx(r"^(from|to|cc|bcc|subject|date|sent|reply-to)\s*:")
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_ABBREVIATIONS = _rx(
    r"\b(e\.g|i\.e|etc|vs|cf|approx|incl|esp|dr|mr|mrs|ms|st|no|fig|et al|"
    r"u\.s|u\.k|a\.m|p\.m)\."
)
_PLACEHOLDER = "\x00{}\x00"
_RESTORE = re.compile("\x00(\\d+)\x00")


def sentences(text: str) -> list[str]:
    """Sentences of a turn: fenced code dropped, quoted and indented-code lines skipped,
    bullets and lines split, inline code spans kept intact."""
    text = _FENCE.sub("\n", text)
    spans: list[str] = []

    def _protect(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return _PLACEHOLDER.format(len(spans) - 1)

    out: list[str] = []
    for raw_line in text.splitlines():
        if raw_line.startswith(("    ", "\t")) and not _BULLET.match(raw_line):
            continue  # indented code
        line = _BULLET.sub("", raw_line.strip())
        if (
            not line
            or line.startswith(">")
            or set(line) <= set("-=*_ ")
            or _EMAIL_HEADER.match(line)
        ):
            continue
        line = _CODE_SPAN.sub(_protect, line)
        line = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\x01"), line)
        for part in _SPLIT.split(line):
            part = part.strip().replace("\x01", ".")
            part = _RESTORE.sub(lambda m: spans[int(m.group(1))], part)
            if part:
                out.append(part)
    return out
