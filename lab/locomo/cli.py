"""What the LoCoMo commands share: the dataset read for a command, its errors as the command's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from django.core.management.base import CommandError

from lab.locomo.dataset import Conversation, load_locomo


def conversations_for_command(path: Path, sample_ids: Sequence[str]) -> list[Conversation]:
    """The file's conversations (``sample_ids``, or all), or a :class:`CommandError` saying
    why not."""
    if not path.is_file():
        raise CommandError(f"no dataset at {path}")
    try:
        return load_locomo(path, sample_ids=sample_ids)
    except (ValueError, KeyError) as exc:
        raise CommandError(f"not a LoCoMo file: {exc}") from exc
