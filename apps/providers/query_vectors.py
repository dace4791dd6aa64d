"""Query vectors: embedded once per caller and reused, and embedded beside the keyword leg.

A recall embeds its query before the vector leg can run; on the local model that is the
largest single cost of a recall (docs/benchmarks/load.md, "Where a request's time goes"). Two
things cut it:

* **A per-process LRU of recent query vectors**, keyed by *whose* query it is (the caller's
  tenant and subject), the whole provider configuration and the exact text. An agent that
  asks the same thing again, or merged recall asking the memory and knowledge halves the same
  question, pays one embedding. The caller is part of the key so that the latency of a hit
  can never tell one caller what another asked. Only successful embeddings are kept; a
  cached vector keeps serving while the provider's breaker is open.
* **:func:`embed_query_soon`**, which starts the embedding on a small per-process thread pool
  and returns a future, so a caller can run work that does not need the vector (the keyword
  leg's SQL) while the model runs (it releases the GIL).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from cachetools import LRUCache
from django.conf import settings

from apps.providers.embeddings import EmbeddingConfig, embed_search_query

#: (caller, provider configuration, text)
CacheKey = tuple[str, str, str]


def query_caller(tenant_id: object, subject_id: str) -> str:
    """Whose query it is: the cache never hands one caller's vector to another."""
    return f"{tenant_id}|{subject_id}"


def ready(vector: list[float]) -> Future[list[float]]:
    """A vector already in hand, as the future the recall legs wait on."""
    done: Future[list[float]] = Future()
    done.set_result(vector)
    return done


_lock = threading.Lock()
_vectors: LRUCache[CacheKey, np.ndarray] | None = None
_pool: ThreadPoolExecutor | None = None


def _cache() -> LRUCache[CacheKey, np.ndarray] | None:
    global _vectors
    size = settings.EMBEDDING_QUERY_CACHE_SIZE
    if size <= 0:
        return None
    if _vectors is None or _vectors.maxsize != size:
        _vectors = LRUCache(maxsize=size)
    return _vectors


def cached_query_vector(config: EmbeddingConfig, text: str, *, caller: str) -> list[float] | None:
    """The vector this process embedded for ``caller``'s ``text`` under ``config``, if kept."""
    key = (caller, config.breaker_key, text)
    with _lock:
        cache = _cache()
        vector = None if cache is None else cache.get(key)
    return None if vector is None else vector.tolist()


def embed_query_cached(config: EmbeddingConfig, text: str, *, caller: str) -> list[float]:
    """``embed_search_query`` through the cache (raises ``EmbeddingsUnavailable`` like it)."""
    vector = cached_query_vector(config, text, caller=caller)
    if vector is not None:
        return vector
    # Kept as float32, what pgvector stores and compares, so a hit ranks exactly like a miss.
    stored = np.asarray(embed_search_query(config, text), dtype=np.float32)
    with _lock:
        cache = _cache()
        if cache is not None:
            cache[(caller, config.breaker_key, text)] = stored
    return stored.tolist()


def embed_query_soon(config: EmbeddingConfig, text: str, *, caller: str) -> Future[list[float]]:
    """:func:`embed_query_cached`, started now on the query pool; a cached vector comes back
    as a future that is already done, without a thread hop."""
    vector = cached_query_vector(config, text, caller=caller)
    if vector is not None:
        return ready(vector)
    return _query_pool().submit(embed_query_cached, config, text, caller=caller)


def _query_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                max_workers=max(1, settings.EMBEDDING_QUERY_THREADS),
                thread_name_prefix="engram-query-embedding",
            )
        return _pool


def clear_query_vectors() -> None:
    """Forget every kept vector (tests; an operator changing models in place)."""
    with _lock:
        if _vectors is not None:
            _vectors.clear()
