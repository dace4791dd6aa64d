"""Embeddings for the rest of Engram (DESIGN §3): one config type, one call, one failure type.

``embed_texts`` returns L2-normalised vectors of exactly ``settings.EMBEDDING_DIMENSIONS``
floats, or raises ``EmbeddingsUnavailable`` — never another exception — so every caller can
degrade (ILIKE fallback, 503 ``gate_unavailable``, snooze) instead of answering 500. Every
call to a remote provider goes through a circuit breaker keyed by the whole provider
configuration, which counts provider faults only; the in-process local model has none.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from django.conf import settings

from apps.providers.breaker import CircuitBreaker, CircuitOpen
from apps.providers.clients import OPENAI_DEFAULT_BASE_URL, OPENAI_DEFAULT_EMBEDDING_MODEL
from apps.providers.embedders import local_onnx
from apps.providers.embedders.fake import FakeEmbedder
from apps.providers.exceptions import (
    EmbeddingsUnavailable,
    ProviderRejected,
    ProvidersErrorCode,
)
from apps.providers.faults import classify_provider_error, provider_config_breaker_key

__all__ = [
    "EMBEDDING_PROVIDERS",
    "MODEL_FINGERPRINT_LENGTH",
    "EmbeddingConfig",
    "EmbeddingsUnavailable",
    "embed_query",
    "embed_search_query",
    "embed_texts",
    "embedding_content_hash",
    "model_fingerprint",
    "normalise_text",
    "probe_embedding_provider",
]

logger = logging.getLogger("engram.providers")

EMBEDDING_PROVIDERS = frozenset({"local", "openai", "fake"})
_PROBE_TEXT = "Engram is checking that this embedding provider answers."
_WHITESPACE = re.compile(r"\s+")


class Embedder(Protocol):
    """What each provider module implements; vectors need not be normalised."""

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for search queries, to compare with ``embed``'s: the same encoder, or a
        cheaper approximation of it (the local provider's int8 query model)."""
        ...


@dataclass(frozen=True)
class EmbeddingConfig:
    provider: str
    model: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    dimensions: int | None = None
    #: Whose configuration this is: a tenant's id for its own provider, blank for the
    #: deployment default. Part of the breaker key, so a tenant's provider never shares a
    #: breaker with the default, even when both name the same endpoint.
    owner: str = ""

    @classmethod
    def from_parts(
        cls, *, provider: str, config: Mapping[str, Any], api_key: str = "", owner: str = ""
    ) -> EmbeddingConfig:
        """Build from a stored tenant config (keys ``model``, ``base_url``, ``dimensions``).

        Raises ``ValueError`` when ``dimensions`` is not a positive integer.
        """
        return cls(
            provider=provider.strip(),
            model=str(config.get("model") or "").strip(),
            base_url=str(config.get("base_url") or "").strip(),
            api_key=api_key,
            dimensions=_positive_int_or_none(config.get("dimensions")),
            owner=owner,
        )

    @classmethod
    def default(cls) -> EmbeddingConfig:
        """The deployment's provider, for tenants that configured none."""
        return cls(
            provider=settings.EMBEDDING_PROVIDER,
            model=settings.EMBEDDING_MODEL,
            base_url=settings.EMBEDDING_BASE_URL,
            api_key=settings.EMBEDDING_API_KEY,
        )

    @property
    def breaker_key(self) -> str:
        """One breaker per provider configuration: the endpoint, the dimensions, a digest of
        the key (never the key) and the owner."""
        return provider_config_breaker_key(
            self.endpoint_key, str(self.dimensions or ""), self.api_key, self.owner
        )

    @property
    def endpoint_key(self) -> str:
        """The endpoint: provider, URL and model, never the key."""
        if self.provider == "openai":
            base_url = (self.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")
            return f"openai|{base_url}|{self.model or OPENAI_DEFAULT_EMBEDDING_MODEL}"
        if self.provider == "local":
            return f"local||{local_onnx.configured_model_id()}"
        return f"{self.provider}|{self.base_url}|{self.model}"

    @property
    def fingerprint(self) -> str:
        """The short fingerprint of the vector space this configuration embeds into, stored
        next to every vector (``embedding_model``): :func:`model_fingerprint`."""
        return model_fingerprint(self.endpoint_key, self.dimensions)


#: Characters of a model fingerprint (hex of a sha256): 64 bits, so two configurations never
#: collide in practice, in a column of 17 bytes a row.
MODEL_FINGERPRINT_LENGTH = 16


def model_fingerprint(endpoint_key: str, dimensions: int | None) -> str:
    """What makes two vectors comparable — endpoint, model and the dimension asked for (a
    ``None`` is the deployment's) — as 16 hex characters. Never the key or the owner: a
    tenant's own provider naming the default's endpoint embeds into the same space. Vectors
    of different fingerprints are never compared (docs/embeddings.md, "Which model made a
    vector")."""
    return _fingerprint(endpoint_key, dimensions or settings.EMBEDDING_DIMENSIONS)


@functools.lru_cache(maxsize=256)
def _fingerprint(endpoint_key: str, dimensions: int) -> str:
    # Cached: recall asks for its tenant's fingerprint on every read.
    digest = hashlib.sha256(f"{endpoint_key}|{dimensions}".encode())
    return digest.hexdigest()[:MODEL_FINGERPRINT_LENGTH]


def embed_texts(config: EmbeddingConfig, texts: Sequence[str]) -> list[list[float]]:
    """One unit vector of ``settings.EMBEDDING_DIMENSIONS`` floats per text, in order."""
    return _embed(config, texts, queries=False)


def _embed(config: EmbeddingConfig, texts: Sequence[str], *, queries: bool) -> list[list[float]]:
    if isinstance(texts, str):
        # A str is a Sequence[str]: embedding it would silently embed each character.
        raise TypeError("embed_texts takes a sequence of texts, not one string")
    batch = list(texts)
    if not batch:
        return []
    expected = settings.EMBEDDING_DIMENSIONS
    embedder = _embedder_for(config)
    if embedder.dimensions != expected:
        raise _dimension_mismatch(config=config, got=embedder.dimensions, expected=expected)
    encode = embedder.embed_queries if queries else embedder.embed
    try:
        if config.provider == "local":
            # In process: there is no remote service to stop calling, and the breaker's state
            # would cost a shared-cache round trip on every recall.
            vectors = encode(batch)
        else:
            breaker = CircuitBreaker(
                f"embeddings:{config.breaker_key}", classify=classify_provider_error
            )
            vectors = breaker.call(lambda: encode(batch))
    except CircuitOpen as exc:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.CIRCUIT_OPEN,
            f"The {config.provider} embedding provider is failing; calls are paused.",
        ) from exc
    except EmbeddingsUnavailable:
        raise
    except ProviderRejected as exc:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} embedding provider refused the request: {exc}.",
        ) from exc
    except Exception as exc:
        # Deliberately broad: whatever the SDK or runtime raises, callers get the one type
        # they know how to degrade on. The message names the class only — SDK messages can
        # echo request details.
        logger.warning("embedding provider %s failed: %s", config.endpoint_key, type(exc).__name__)
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} embedding provider failed ({type(exc).__name__}).",
        ) from exc
    return _normalised(vectors, config=config, count=len(batch), expected=expected)


def embed_query(config: EmbeddingConfig, text: str) -> list[float]:
    """One text's vector, exactly as ``embed_texts`` would store it."""
    return embed_texts(config, [text])[0]


def embed_search_query(config: EmbeddingConfig, text: str) -> list[float]:
    """A search query's vector, through the provider's query encoder (``embed_queries``):
    only ever compared with stored vectors, never stored itself."""
    return _embed(config, [text], queries=True)[0]


def probe_embedding_provider(config: EmbeddingConfig) -> None:
    """Embed one short text; raise ``EmbeddingsUnavailable`` if the provider can't serve us.

    Used when a tenant configures a provider, so a wrong dimension, a bad key or an
    unreachable endpoint is refused then rather than at the first write.
    """
    embed_texts(config, [_PROBE_TEXT])


def normalise_text(text: str) -> str:
    """Strip and collapse whitespace runs to one space; case is meaningful and kept."""
    return _WHITESPACE.sub(" ", text).strip()


def embedding_content_hash(text: str) -> str:
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def _embedder_for(config: EmbeddingConfig) -> Embedder:
    expected = settings.EMBEDDING_DIMENSIONS
    if config.provider == "local":
        return local_onnx.LocalOnnxEmbedder()
    if config.provider == "fake":
        return FakeEmbedder(dimensions=config.dimensions or expected, model=config.model)
    if config.provider == "openai":
        if not config.api_key and not config.base_url:
            raise EmbeddingsUnavailable(
                ProvidersErrorCode.MISSING_API_KEY,
                "The openai embedding provider needs an api_key (or a base_url for a "
                "server that takes none).",
            )
        # Imported here: the SDK takes half a second to import and most deployments run local.
        from apps.providers.embedders.openai_compatible import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            base_url=config.base_url,
            api_key=config.api_key,
            model=config.model,
            dimensions=config.dimensions or expected,
        )
    raise EmbeddingsUnavailable(
        ProvidersErrorCode.UNKNOWN_PROVIDER,
        f"Unknown embedding provider {config.provider!r}; "
        f"choose one of {sorted(EMBEDDING_PROVIDERS)}.",
    )


def _normalised(
    vectors: list[list[float]], *, config: EmbeddingConfig, count: int, expected: int
) -> list[list[float]]:
    if len(vectors) != count:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} embedding provider returned {len(vectors)} vectors "
            f"for {count} texts.",
        )
    for vector in vectors:
        if len(vector) != expected:
            raise _dimension_mismatch(config=config, got=len(vector), expected=expected)
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} embedding provider returned non-numeric vectors.",
        ) from exc
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
        # A zero or NaN vector has no direction; cosine distance to it is undefined.
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} embedding provider returned a zero or non-finite vector.",
        )
    result: list[list[float]] = (matrix / norms).tolist()
    return result


def _dimension_mismatch(
    *, config: EmbeddingConfig, got: int, expected: int
) -> EmbeddingsUnavailable:
    return EmbeddingsUnavailable(
        ProvidersErrorCode.DIMENSION_MISMATCH,
        f"The {config.provider} embedding provider returns {got}-dimensional vectors; this "
        f"deployment stores {expected} (EMBEDDING_DIMENSIONS).",
    )


def _positive_int_or_none(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("dimensions must be a positive integer")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError("dimensions must be a positive integer")
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise ValueError("dimensions must be a positive integer") from exc
    if number <= 0:
        raise ValueError("dimensions must be a positive integer")
    return number
