"""Vectors for rows a factory writes directly, without a provider call."""

from __future__ import annotations

import numpy as np
from django.conf import settings

from apps.providers.embedders.fake import FakeEmbedder


def unit_vector(axis: int = 0) -> list[float]:
    """The basis vector along ``axis``: ``settings.EMBEDDING_DIMENSIONS`` floats, norm 1."""
    dimensions = settings.EMBEDDING_DIMENSIONS
    vector = [0.0] * dimensions
    vector[axis % dimensions] = 1.0
    return vector


def fake_provider_vector(text: str) -> list[float]:
    """The unit vector the test settings' provider (``EMBEDDING_PROVIDER = "fake"``) gives
    ``text``, normalised as ``embed_texts`` normalises it: a row carrying it ranks against a
    recall query exactly as a row the embedding drain wrote. Under another provider (the
    ``local_embeddings`` fixture) pass an explicit vector instead."""
    vector = np.asarray(
        FakeEmbedder(dimensions=settings.EMBEDDING_DIMENSIONS).embed([text])[0], dtype=np.float64
    )
    unit: list[float] = (vector / np.linalg.norm(vector)).tolist()
    return unit
