"""Token vectors for late interaction (MaxSim): the query's tokens in context, a document's
tokens as they enter the model.

Recall re-orders its fused candidates by how well each query token finds a close token in the
candidate (``apps/memory/selectors/recall/rerank.py``). The query side is the local query
model's last hidden state, one row per token, kept from the pass that embedded the query. The
document side is each token's row of the same model's input embedding table, read from the
model file the deployment already verified: a tokenizer call and a table lookup, nothing
stored and no forward pass per candidate. Contextual document tokens would need either ~28 KB
stored per memory or a forward pass per candidate per recall; on LoCoMo's dev split the static
ones kept most of their gain (docs/benchmarks/locomo.md, "Late interaction over the
fused head").

Only a local model whose embedding table is known here has token vectors
(:func:`late_interaction_available`); every vector is L2-normalised, special tokens dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from cachetools import LRUCache
from django.conf import settings
from threadpoolctl import threadpool_limits

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
#: Recent documents' token ids per process, by text (~30 ids a memory).
_DOCUMENT_CACHE_SIZE = 20_000

_lock = threading.Lock()
# cachetools' LRU reorders on every read, so reads take a lock too.
_query_lock = threading.Lock()
_tables: dict[str, TokenVectors] = {}
_queries: LRUCache[tuple[str, str], TokenVectors] = LRUCache(maxsize=_QUERY_CACHE_SIZE)
_document_lock = threading.Lock()
_documents: LRUCache[str, np.ndarray[Any, np.dtype[np.int64]]] = LRUCache(
    maxsize=_DOCUMENT_CACHE_SIZE
)


def late_interaction_available() -> bool:
    """Whether the deployment embeds with a local model whose token table is known here."""
    return (
        settings.EMBEDDING_PROVIDER == "local"
        and settings.LOCAL_EMBEDDING_MODEL in _EMBEDDING_TABLES
    )


def _normalised(rows: np.ndarray[Any, Any]) -> TokenVectors:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9, None)


def _table() -> TokenVectors:
    """The configured model's input embedding table, normalised rows at float16 precision,
    held as float32 (~47 MB): a recall gathers its head's rows as they are, where converting
    them from a float16 table cost ~0.8 ms a recall. Read once per process from the file
    :func:`local_onnx.load_model` verified."""
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
            table = _normalised(rows).astype(np.float16).astype(np.float32)
            # max_sims compares rows of this table in one BLAS product. Multi-threaded at that
            # size, on cores shared with the model's own threads and other processes, it took
            # ~100x longer; on one thread ~0.2 ms for a head of 30 (numpy's einsum: ~0.8 ms).
            threadpool_limits(limits=1, user_api="blas")
            _tables[name] = table
    return table


def load_token_table() -> None:
    """Read the configured model's token table now (a worker's start), if it has one."""
    if late_interaction_available():
        _table()


def query_token_vectors(query: str) -> TokenVectors:
    """The query's tokens in context, from the local query model (cached per process)."""
    key = (settings.LOCAL_EMBEDDING_MODEL, query)
    with _query_lock:
        cached = _queries.get(key)
    if cached is not None:
        return cached
    # Usually the query's embedding pass, which ran just before, kept them.
    found = local_onnx.recent_query_states(query)
    if found is None:
        instruction = local_onnx.configured_model().query_instruction
        found = local_onnx.load_query_model().token_states(instruction + query)
    states, encoding = found
    keep = np.asarray(encoding.special_tokens_mask) == 0
    vectors = _normalised(states[keep])
    with _query_lock:
        _queries[key] = vectors
    return vectors


@dataclass(frozen=True)
class DocumentTokens:
    """Several texts' tokens as rows of the model's input embedding table, one text's after
    another in one array: read from the table in one gather, compared in one product."""

    vectors: TokenVectors
    lengths: tuple[int, ...]


def document_token_vectors(texts: Sequence[str]) -> DocumentTokens:
    """Each text's tokens as rows of the model's input embedding table."""
    ids = [_document_token_ids(text) for text in texts]
    rows = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
    # One gather for the whole head: per text, the call costs more than the rows it moves.
    return DocumentTokens(
        vectors=np.take(_table(), rows, axis=0), lengths=tuple(len(row) for row in ids)
    )


def _document_token_ids(text: str) -> np.ndarray[Any, np.dtype[np.int64]]:
    """A text's token ids, special tokens dropped; recent texts' kept per process (the same
    memories come back as candidates query after query, and tokenizing is most of the cost)."""
    with _document_lock:
        ids = _documents.get(text)
    if ids is None:
        encoding = local_onnx.load_model().tokenizer.encode(text)
        ids = np.asarray(encoding.ids, dtype=np.int64)[
            np.asarray(encoding.special_tokens_mask) == 0
        ]
        with _document_lock:
            _documents[text] = ids
    return ids


def max_sims(query: TokenVectors, documents: DocumentTokens) -> list[float]:
    """Late interaction: for each document, each query token's best cosine in it, averaged
    over the query (0 for an empty side)."""
    lengths = documents.lengths
    if not len(query) or not sum(lengths):
        return [0.0] * len(lengths)
    similarity = query @ documents.vectors.T  # one BLAS thread: see _table
    starts = np.cumsum([0, *[length for length in lengths if length][:-1]])
    best = np.maximum.reduceat(similarity, starts, axis=1).mean(axis=0)
    found = iter(best.tolist())
    return [float(next(found)) if length else 0.0 for length in lengths]
