"""A deterministic embedder for plumbing tests: feature hashing, no model, no randomness.

Lower-cased words and their character trigrams are hashed (with hashlib, not the per-process
salted ``hash()``) into signed buckets, so identical texts give identical vectors in every
process and texts sharing words are cosine-similar. A configured ``model`` salts every feature,
so two fake "models" embed into unrelated spaces, as two real ones do: tests of a model change
see a query of one model find nothing of the other by its vector. It knows nothing about meaning:
"dark mode" and "dark theme" are close because they share "dark", not because they are
paraphrases.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

# Other apps' tests put this in a text to simulate a provider outage for the call embedding it.
FAIL_MARKER = "[[embed-fail]]"

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
# Trigrams let "prefers" and "preferred" overlap a little; words still dominate.
_TRIGRAM_WEIGHT = 0.25


class FakeProviderError(ConnectionError):
    """What the fake raises for a text carrying ``FAIL_MARKER``: a transport fault, which the
    circuit breaker counts."""


class FakeEmbedder:
    def __init__(self, *, dimensions: int, model: str = "") -> None:
        self.dimensions = dimensions
        self.salt = f"{model}\x1f" if model else ""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        for text in texts:
            if FAIL_MARKER in text:
                raise FakeProviderError("simulated embedding provider failure")
        return [self._vector(text) for text in texts]

    embed_queries = embed

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, weight in _features(text):
            number = int.from_bytes(
                hashlib.blake2b((self.salt + feature).encode("utf-8"), digest_size=8).digest(),
                "big",
            )
            sign = -1.0 if number >> 63 else 1.0
            vector[number % self.dimensions] += sign * weight
        return vector


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    if not words:
        # Keeps the vector non-zero (and normalisable) for empty or punctuation-only text.
        return [("empty", _WORD_WEIGHT)]
    features = [(f"w:{word}", _WORD_WEIGHT) for word in words]
    for word in words:
        padded = f"#{word}#"
        features.extend(
            (f"c:{padded[start : start + 3]}", _TRIGRAM_WEIGHT) for start in range(len(padded) - 2)
        )
    return features
