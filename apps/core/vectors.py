"""pgvector text literals, written one way everywhere."""

from __future__ import annotations

from collections.abc import Iterable


def vector_literal(vector: Iterable[float]) -> str:
    """``[v1,v2,…]`` for a ``::vector`` cast. Nine significant digits round-trip a float32
    exactly (pgvector stores float32), so what is written is what was computed."""
    return "[" + ",".join(["%.9g" % value for value in vector]) + "]"  # noqa: UP031 - fastest
