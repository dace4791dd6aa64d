"""How titles, aliases and queries are compared for the curated answer (write and read side)."""

from __future__ import annotations

from apps.providers.embeddings import normalise_text


def normalise_phrase(text: str) -> str:
    return normalise_text(text).lower().rstrip("?!. ")
