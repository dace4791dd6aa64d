"""Throughput and latency of the local embedding model, for ``manage.py embedding_bench``.

Measures the path callers use (``embed_texts``, breaker included), on synthetic sentences
of 10-40 words generated deterministically so runs are comparable.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from django.conf import settings

from apps.providers.embedders import local_onnx
from apps.providers.embeddings import (
    EmbeddingConfig,
    embed_query,
    embed_search_query,
    embed_texts,
)

_VOCABULARY = [
    "the",
    "user",
    "prefers",
    "dark",
    "mode",
    "in",
    "their",
    "editor",
    "and",
    "wants",
    "short",
    "answers",
    "about",
    "deployment",
    "schedules",
    "while",
    "the",
    "agent",
    "remembers",
    "project",
    "names",
    "meeting",
    "notes",
    "tax",
    "deadlines",
    "release",
    "dates",
    "favourite",
    "languages",
    "database",
    "migrations",
    "coffee",
    "orders",
    "travel",
    "plans",
    "and",
    "who",
    "owns",
    "which",
    "service",
    "after",
    "the",
    "quarterly",
    "review",
    "moved",
    "the",
    "launch",
    "to",
    "april",
    "because",
    "tests",
    "failed",
]


@dataclass(frozen=True)
class EmbeddingBenchResult:
    model: str
    dimensions: int
    threads: int
    texts: int
    batch: int
    load_seconds: float
    texts_per_second: float
    #: Process CPU time per text in the batched calls (all threads; the cost on shared cores).
    cpu_ms_per_text: float
    queries: int
    query_p50_ms: float
    query_p95_ms: float
    #: Recall's query path (``embed_search_query``: the query encoder and its instruction).
    search_query_p50_ms: float
    search_query_cpu_p50_ms: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def synthetic_sentences(*, count: int) -> list[str]:
    """``count`` sentences of 10-40 words; the same list on every run."""
    sentences = []
    for index in range(count):
        length = 10 + (index * 7919) % 31
        start = (index * 104_729) % len(_VOCABULARY)
        words = [_VOCABULARY[(start + step * 3) % len(_VOCABULARY)] for step in range(length)]
        sentences.append(f"Note {index}: " + " ".join(words) + ".")
    return sentences


def embedding_bench_run(*, texts: int, batch: int, queries: int) -> EmbeddingBenchResult:
    config = EmbeddingConfig(provider="local")
    sentences = synthetic_sentences(count=texts)

    started = time.perf_counter()
    local_onnx.load_model()
    load_seconds = time.perf_counter() - started
    # Warm-up: the first runs allocate ONNX Runtime's buffers.
    embed_texts(config, sentences[:batch])

    started, cpu_started = time.perf_counter(), time.process_time()
    for start in range(0, len(sentences), batch):
        embed_texts(config, sentences[start : start + batch])
    batched_seconds = time.perf_counter() - started
    batched_cpu_seconds = time.process_time() - cpu_started

    latencies_ms = []
    for index in range(queries):
        text = sentences[index % len(sentences)]
        started = time.perf_counter()
        embed_query(config, text)
        latencies_ms.append((time.perf_counter() - started) * 1000.0)
    p50, p95 = np.percentile(latencies_ms, [50, 95])

    local_onnx.load_query_model()
    embed_search_query(config, "warm-up")
    search_ms, search_cpu_ms = [], []
    for index in range(queries):
        text = sentences[index % len(sentences)]
        started, cpu_started = time.perf_counter(), time.process_time()
        embed_search_query(config, text)
        search_ms.append((time.perf_counter() - started) * 1000.0)
        search_cpu_ms.append((time.process_time() - cpu_started) * 1000.0)

    return EmbeddingBenchResult(
        model=local_onnx.configured_model_id(),
        dimensions=local_onnx.DIMENSIONS,
        threads=settings.LOCAL_EMBEDDING_THREADS,
        texts=texts,
        batch=batch,
        load_seconds=round(load_seconds, 3),
        texts_per_second=round(texts / batched_seconds, 1),
        cpu_ms_per_text=round(batched_cpu_seconds * 1000.0 / texts, 2),
        queries=queries,
        query_p50_ms=round(float(p50), 2),
        query_p95_ms=round(float(p95), 2),
        search_query_p50_ms=round(float(np.percentile(search_ms, 50)), 2),
        search_query_cpu_p50_ms=round(float(np.percentile(search_cpu_ms, 50)), 2),
    )
