"""File handling shared by ``knowledge_export`` and ``knowledge_import``."""

from __future__ import annotations

from pathlib import Path

from apps.core.management.base import INVALID_ARGUMENTS, CommandFailed

FORMATS = ("md", "jsonl")


def resolve_format(path: Path, requested: str | None) -> str:
    """``--format`` if given, else JSON Lines for a ``*.jsonl`` path and Markdown otherwise."""
    if requested:
        if requested not in FORMATS:
            raise CommandFailed(INVALID_ARGUMENTS, f"--format must be one of {', '.join(FORMATS)}.")
        return requested
    return "jsonl" if path.suffix == ".jsonl" else "md"
