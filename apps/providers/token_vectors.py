"""Token vectors for late interaction (MaxSim): the query's tokens in context, a document's
tokens as they enter the model.

Recall re-orders its fused candidates by how well each query token finds a close token in the
candidate (``apps/memory/selectors/recall/rerank.py``). The query side is the local query
model's last hidden state, one row per token: one more forward pass over a short text. The
document side is each token's row of the same model's input embedding table, read from the
model file the deployment already verified: a tokenizer call and a table lookup, nothing
stored and no forward pass per candidate. Contextual document tokens would need either ~28 KB
stored per memory or a forward pass per candidate per recall; on LoCoMo's dev split the static
ones kept most of their gain (docs/benchmarks/locomo.md, "Late interaction").

Only a local model whose embedding table is known here has token vectors
(:func:`late_interaction_available`); every vector is L2-normalised, special tokens dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from cachetools import LRUCache
from django.conf import settings

from apps.providers.embedders import local_onnx

TokenVectors = np.ndarray[Any, np.dtype[np.float32]]

#: The initializers of each known model file that hold its input token embeddings: int8 rows
#: and a scale per row.
_EMBEDDING_TABLES = {
    local_onnx.MINILM.name: (
        "inner.embeddings.word_embeddings.weight_q",
        "inner.embeddings.word_embeddings.weight_scale",
    ),
}
#: Recent queries' token vectors per process, by model and text (they depend on nothing else).
_QUERY_CACHE_SIZE = 256

_lock = threading.Lock()
# cachetools' LRU reorders on every read, so reads take a lock too.
_query_lock = threading.Lock()
_tables: dict[str, np.ndarray[Any, np.dtype[np.float16]]] = {}
_queries: LRUCache[tuple[str, str], TokenVectors] = LRUCache(maxsize=_QUERY_CACHE_SIZE)


def late_interaction_available() -> bool:
    """Whether the deployment embeds with a local model whose token table is known here."""
    return (
        settings.EMBEDDING_PROVIDER == "local"
        and settings.LOCAL_EMBEDDING_MODEL in _EMBEDDING_TABLES
    )


def _normalised(rows: np.ndarray[Any, Any]) -> TokenVectors:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9, None)


def _table() -> np.ndarray[Any, np.dtype[np.float16]]:
    """The configured model's input embedding table, normalised rows, float16 (~23 MB);
    read once per process from the file :func:`local_onnx.load_model` verified."""
    name = settings.LOCAL_EMBEDDING_MODEL
    table = _tables.get(name)
    if table is not None:
        return table
    local_onnx.load_model()  # verifies the file's pin before anything reads it
    with _lock:
        table = _tables.get(name)
        if table is None:
            # Imported here: only this one read needs onnx's protobuf model.
            import onnx
            from onnx import numpy_helper

            weights_name, scale_name = _EMBEDDING_TABLES[name]
            model = onnx.load(str(local_onnx.configured_model().model_path()))
            found = {
                tensor.name: numpy_helper.to_array(tensor)
                for tensor in model.graph.initializer
                if tensor.name in (weights_name, scale_name)
            }
            rows = found[weights_name].astype(np.float32) * found[scale_name]
            table = _normalised(rows).astype(np.float16)
            _tables[name] = table
    return table


def query_token_vectors(query: str) -> TokenVectors:
    """The query's tokens in context, from the local query model (cached per process)."""
    key = (settings.LOCAL_EMBEDDING_MODEL, query)
    with _query_lock:
        cached = _queries.get(key)
    if cached is not None:
        return cached
    model = local_onnx.load_query_model()
    instruction = local_onnx.configured_model().query_instruction
    states, encoding = model.token_states(instruction + query)
    keep = np.asarray(encoding.special_tokens_mask) == 0
    vectors = _normalised(states[keep])
    with _query_lock:
        _queries[key] = vectors
    return vectors


def document_token_vectors(texts: Sequence[str]) -> list[TokenVectors]:
    """Each text's tokens as rows of the model's input embedding table."""
    table = _table()
    tokenizer = local_onnx.load_model().tokenizer
    found = []
    # One encode at a time: for a few dozen short texts, encode_batch's thread pool costs
    # more than it saves.
    for encoding in map(tokenizer.encode, texts):
        ids = np.asarray(encoding.ids)[np.asarray(encoding.special_tokens_mask) == 0]
        found.append(table[ids].astype(np.float32))
    return found


def max_sim(query: TokenVectors, document: TokenVectors) -> float:
    """Late interaction: each query token's best cosine in the document, averaged (0 for an
    empty side)."""
    if not len(query) or not len(document):
        return 0.0
    # NOTE: one product per document, not one over every candidate's tokens at once: the
    # larger product crosses BLAS's threading threshold, and on cores shared with the model's
    # own threads that took ~100x longer.
    return float((query @ document.T).max(axis=1).mean())
