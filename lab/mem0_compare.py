"""Engram and mem0 side by side on LoCoMo: the same turns, the same questions, the same vectors.

``manage.py mem0_compare`` writes each conversation's turns into both systems as a client
would (``"{speaker}: {text}"``, its dia_id and session date in metadata, no session key: the
``unthreaded`` loader of :mod:`lab.locomo.dataset`), asks every category 1-4 question with
limit 10 of both, and scores recall@k with the functions ``recall_eval`` uses.

* **Engram** is asked over HTTP (``POST /api/v1/memory/recall``, default mode) against the
  web tier as ``make run`` starts it (:func:`lab.locomo.harness.web_server`), one agent key
  per conversation; the clock covers the whole request.
* **mem0** (the ``mem0ai`` package, open-source ``Memory``) is asked in-process with
  ``Memory.search`` (no HTTP: that favours mem0). It stores raw text (``infer=False``), keeps
  its vectors in a pgvector table of the same embedded Postgres, runs no LLM and sends no
  telemetry, and embeds with Engram's own local model (:func:`mem0_memory`), so both rank
  the same MiniLM vectors.

mem0 is optional (``requirements/compare.txt``, ``make compare-venv``) and imported only
inside :func:`load_mem0`. The pure parts (figures, medians, the comparison) are tested in
tests/lab/test_mem0_compare.py. docs/benchmarks/mem0.md has the figures.
"""

from __future__ import annotations

import logging
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from lab.locomo import dataset as locomo

#: Both systems are asked for this many results (what an agent puts in its prompt).
SEARCH_LIMIT = 10
KS = (5, 10)
#: Questions asked of each system before the timed ones, with a suffix so that no measured
#: question finds its vector kept (the same warm-up as ``recall_eval --http-queries``).
WARMUP_QUERIES = 20
ENGRAM = "engram"
MEM0 = "mem0"
SYSTEMS = (ENGRAM, MEM0)
#: Engram asked in this process too, right after its HTTP round: informational.
ENGRAM_IN_PROCESS = "engram_in_process"
MEM0_MISSING = (
    "mem0ai is not installed: run `make compare-venv` (it installs requirements/compare.txt "
    "into .venv); the rest of the lab does not need it"
)
#: The pgvector store's default: cosine HNSW. Off by default here (exact scan) because mem0
#: filters by user in a WHERE over the HNSW candidates, which can leave fewer than it asks for.
MEM0_HNSW_DEFAULT = False


class Mem0Unavailable(RuntimeError):
    """mem0ai cannot be imported (not installed, or broken)."""


# --- figures (pure) --------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemFigures:
    """One system's run: recall@k over every question and its search latency."""

    questions: int
    recall: dict[int, float]
    p50_ms: float
    p95_ms: float
    errors: int = 0
    #: Results per answer, on average (a system may return fewer than the limit).
    mean_returned: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "errors": self.errors,
            "mean_returned": round(self.mean_returned, 2),
            "recall": {f"R@{k}": round(v, 4) for k, v in sorted(self.recall.items())},
            "latency_ms": {"p50": round(self.p50_ms, 2), "p95": round(self.p95_ms, 2)},
        }


def system_figures(
    results: Sequence[locomo.QuestionResult], ks: Sequence[int] = KS, *, errors: int = 0
) -> SystemFigures:
    """recall@k (``recall_eval``'s micro average) and latency percentiles of one run."""
    report = locomo.summarise(results, ks)
    return SystemFigures(
        questions=len(results),
        recall=dict(report.overall.recall),
        p50_ms=report.latency_p50_ms,
        p95_ms=report.latency_p95_ms,
        errors=errors,
        mean_returned=statistics.fmean(len(r.retrieved) for r in results) if results else 0.0,
    )


def median_figures(rounds: Sequence[SystemFigures]) -> SystemFigures:
    """The median of each figure over rounds (one round: itself)."""
    if not rounds:
        raise ValueError("no rounds to take the median of")
    ks = rounds[0].recall.keys()
    return SystemFigures(
        questions=rounds[0].questions,
        recall={k: statistics.median(r.recall[k] for r in rounds) for k in ks},
        p50_ms=statistics.median(r.p50_ms for r in rounds),
        p95_ms=statistics.median(r.p95_ms for r in rounds),
        errors=max(r.errors for r in rounds),
        mean_returned=statistics.median(r.mean_returned for r in rounds),
    )


@dataclass(frozen=True)
class Comparison:
    engram: SystemFigures
    mem0: SystemFigures

    @property
    def p50_ratio(self) -> float | None:
        """mem0's p50 over Engram's: how many times faster Engram's typical search is."""
        if self.engram.p50_ms <= 0:
            return None
        return self.mem0.p50_ms / self.engram.p50_ms

    def recall_lead(self, k: int) -> float:
        """Engram's recall@k minus mem0's (positive: Engram ahead)."""
        return self.engram.recall[k] - self.mem0.recall[k]

    def as_dict(self) -> dict[str, Any]:
        ratio = self.p50_ratio
        return {
            ENGRAM: self.engram.as_dict(),
            MEM0: self.mem0.as_dict(),
            "p50_ratio_mem0_over_engram": None if ratio is None else round(ratio, 2),
            "recall_lead_engram_minus_mem0": {
                f"R@{k}": round(self.recall_lead(k), 4) for k in sorted(self.engram.recall)
            },
        }


def alternating_order(round_index: int) -> tuple[str, str]:
    """Which system is asked first in a round: Engram first in even rounds, mem0 in odd."""
    return SYSTEMS if round_index % 2 == 0 else (SYSTEMS[1], SYSTEMS[0])


def engram_retrieved(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The dia_ids of a ``POST /memory/recall`` response, in rank order."""
    return tuple(
        str((hit["memory"].get("metadata") or {}).get("dia_id", "")) for hit in body["data"]
    )


def mem0_retrieved(response: Mapping[str, Any]) -> tuple[str, ...]:
    """The dia_ids of a ``Memory.search`` answer, in rank order."""
    return tuple(str((hit.get("metadata") or {}).get("dia_id", "")) for hit in response["results"])


@dataclass
class AskRun:
    results: list[locomo.QuestionResult] = field(default_factory=list)
    errors: int = 0


def questions_of(
    conversations: Sequence[locomo.Conversation],
) -> list[tuple[locomo.Conversation, locomo.Question]]:
    return [(c, q) for c in conversations for q in c.questions]


# --- Engram over HTTP --------------------------------------------------------------------------


def engram_ask(
    *, url: str, keys: Mapping[str, str], conversations: Sequence[locomo.Conversation]
) -> AskRun:
    """Every question as ``POST /memory/recall {query, limit: 10}`` with its conversation's
    agent key, one at a time on one kept connection, after a warm-up."""
    import json

    from lab.http_client import KeepAliveClient

    asked = questions_of(conversations)
    run = AskRun()
    http = KeepAliveClient(url)
    try:
        for conversation, question in asked[:WARMUP_QUERIES]:
            http.post(
                "/memory/recall",
                {"query": f"{question.question} (warm-up)", "limit": SEARCH_LIMIT},
                token=keys[conversation.sample_id],
            )
        for conversation, question in asked:
            started = time.perf_counter()
            status, payload = http.post_response(
                "/memory/recall",
                {"query": question.question, "limit": SEARCH_LIMIT},
                token=keys[conversation.sample_id],
            )
            latency_ms = (time.perf_counter() - started) * 1000
            retrieved: tuple[str, ...] = ()
            if status == "200":
                retrieved = engram_retrieved(json.loads(payload))
            else:
                run.errors += 1
            run.results.append(_result(conversation, question, retrieved, latency_ms))
    finally:
        http.close()
    return run


def engram_ask_in_process(*, tenant: Any, conversations: Sequence[locomo.Conversation]) -> AskRun:
    """Every question through ``memory_recall(limit=10)`` in this process, as mem0 is asked:
    no HTTP, auth or rendering, the query vector cache off (mem0 keeps none). For reading the
    HTTP figure against, not the comparison itself."""
    from django.test import override_settings

    from apps.memory.selectors import memory_recall
    from lab.locomo.harness import subject_for

    asked = questions_of(conversations)
    run = AskRun()

    def recall(conversation: locomo.Conversation, text: str) -> tuple[str, ...]:
        result = memory_recall(
            tenant=tenant,
            subject_id=subject_for(conversation.sample_id),
            query=text,
            limit=SEARCH_LIMIT,
        )
        return tuple(str((hit.memory.metadata or {}).get("dia_id", "")) for hit in result.results)

    with override_settings(EMBEDDING_QUERY_CACHE_SIZE=0):
        for conversation, question in asked[:WARMUP_QUERIES]:
            recall(conversation, f"{question.question} (warm-up)")
        for conversation, question in asked:
            started = time.perf_counter()
            retrieved = recall(conversation, question.question)
            latency_ms = (time.perf_counter() - started) * 1000
            run.results.append(_result(conversation, question, retrieved, latency_ms))
    return run


def _result(
    conversation: locomo.Conversation,
    question: locomo.Question,
    retrieved: tuple[str, ...],
    latency_ms: float,
) -> locomo.QuestionResult:
    return locomo.QuestionResult(
        sample_id=conversation.sample_id,
        category=question.category,
        evidence=question.evidence,
        retrieved=retrieved,
        latency_ms=latency_ms,
    )


# --- mem0 in-process ------------------------------------------------------------------------


def load_mem0() -> Any:
    """``mem0.Memory``, imported with telemetry off and its home in a temporary directory."""
    os.environ["MEM0_TELEMETRY"] = "False"
    # One INFO line per stored vector otherwise.
    logging.getLogger("mem0").setLevel(logging.WARNING)
    os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))
    try:
        from mem0 import Memory
    except ImportError as exc:
        raise Mem0Unavailable(f"{MEM0_MISSING} ({exc})") from exc
    return Memory


def mem0_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("mem0ai")


class _NoLLM:
    """Stands in for mem0's LLM: with ``infer=False`` nothing should ask one."""

    def generate_response(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("mem0 asked for an LLM; mem0_compare runs it with infer=False only")


def _engram_embedder(base: type[Any]) -> Any:
    """A mem0 embedder that yields exactly Engram's vectors: stored texts through the model
    Engram embeds memories with, search queries through its query encoder."""
    from apps.providers.embeddings import EmbeddingConfig, embed_search_query, embed_texts

    class EngramLocalEmbedding(base):
        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            config = EmbeddingConfig.default()
            if memory_action == "search":
                return embed_search_query(config, text)
            return embed_texts(config, [text])[0]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            config = EmbeddingConfig.default()
            if memory_action == "search":
                return [embed_search_query(config, text) for text in texts]
            return embed_texts(config, texts)

    return EngramLocalEmbedding()


def mem0_config(*, conninfo: str, collection: str, history_path: str, hnsw: bool) -> dict[str, Any]:
    """mem0's configuration: pgvector on the lab's Postgres, 384 dimensions, an LLM and an
    embedder that point nowhere (both are replaced once built; see :func:`mem0_memory`)."""
    unreachable = "http://127.0.0.1:9/v1"  # the discard port: a call would fail at once
    return {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_string": conninfo,
                "collection_name": collection,
                "embedding_model_dims": 384,
                "hnsw": hnsw,
                "diskann": False,
            },
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "api_key": "unused",
                "openai_base_url": unreachable,
                "embedding_dims": 384,
            },
        },
        "llm": {
            "provider": "openai",
            "config": {"api_key": "unused", "openai_base_url": unreachable},
        },
        "history_db_path": history_path,
    }


@contextmanager
def mem0_memory(*, conninfo: str, hnsw: bool = MEM0_HNSW_DEFAULT) -> Iterator[Any]:
    """A mem0 ``Memory`` on its own pgvector table (dropped on leaving), embedding with
    Engram's local model and with no LLM. mem0 has no config for an in-process embedder
    short of LangChain, so its embedder and LLM are swapped for ours once it is built."""
    memory_class = load_mem0()
    from mem0.embeddings.base import EmbeddingBase

    collection = f"mem0_compare_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="mem0-compare-") as home:
        config = mem0_config(
            conninfo=conninfo,
            collection=collection,
            history_path=os.path.join(home, "history.db"),
            hnsw=hnsw,
        )
        memory = memory_class.from_config(config)
        memory.embedding_model = _engram_embedder(EmbeddingBase)
        memory.llm = _NoLLM()
        try:
            yield memory
        finally:
            try:
                memory.vector_store.delete_col()
            finally:
                memory.vector_store.connection_pool.close()
                memory.close()


def mem0_subject(sample_id: str) -> str:
    return f"locomo-{sample_id}"


def mem0_ingest(memory: Any, conversations: Sequence[locomo.Conversation]) -> tuple[int, float]:
    """Every turn as ``Memory.add(text, user_id, metadata, infer=False)``, one call per turn
    (mem0's add takes one message's text at a time when it does not infer). Returns the
    memories written and the seconds taken."""
    started = time.perf_counter()
    written = 0
    for conversation in conversations:
        for spec in locomo.unthreaded_specs(conversation):
            memory.add(
                spec.text,
                user_id=mem0_subject(conversation.sample_id),
                metadata=spec.metadata,
                infer=False,
            )
            written += 1
    return written, time.perf_counter() - started


def mem0_ask(memory: Any, conversations: Sequence[locomo.Conversation]) -> AskRun:
    """Every question as ``Memory.search(query, filters={"user_id": ...}, top_k=10)`` (mem0
    2.x takes the user in ``filters`` and the limit as ``top_k``), after a warm-up."""
    asked = questions_of(conversations)

    def search(conversation: locomo.Conversation, text: str) -> Any:
        return memory.search(
            text, filters={"user_id": mem0_subject(conversation.sample_id)}, top_k=SEARCH_LIMIT
        )

    for conversation, question in asked[:WARMUP_QUERIES]:
        search(conversation, f"{question.question} (warm-up)")
    run = AskRun()
    for conversation, question in asked:
        started = time.perf_counter()
        try:
            response = search(conversation, question.question)
        except Exception:  # counted, like a non-2xx answer on the Engram side
            run.errors += 1
            retrieved: tuple[str, ...] = ()
        else:
            retrieved = mem0_retrieved(response)
        latency_ms = (time.perf_counter() - started) * 1000
        run.results.append(_result(conversation, question, retrieved, latency_ms))
    return run
