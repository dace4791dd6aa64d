"""Run LoCoMo against the real memory services: ingest, embed, ask, tear down.

Everything goes through the code paths the API uses, with the inputs the API would hand
them: ``memory_write_batch`` to write (what ``POST /api/v1/memory/batch`` calls, in batches of
``MEMORY_BATCH_MAX_ITEMS``; the ``facts`` loader one memory per call, as ``POST
/api/v1/memory`` does), ``memory_embed_pending`` to embed (what the on-commit task runs),
``memory_recall`` to ask. :func:`http_latency` then times recall over HTTP against a real
web server. The throwaway tenant and every row it owns are removed by
:func:`evaluation_tenant_remove`. Nothing here runs on a request path.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.memory.models import Memory
from apps.memory.recall_bump import wait_for_pending_bumps
from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_write_batch
from apps.providers.embeddings import EmbeddingConfig
from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create, tenant_create
from lab.http_client import KeepAliveClient
from lab.locomo.dataset import (
    LOADER_CLIENT,
    LOADER_FACTS,
    Conversation,
    QuestionResult,
    Retrieved,
    loader_specs,
    percentile,
)

EMBED_BATCH = 256
RECALL_LIMIT = 50
Progress = Callable[[str, int], None]


def subject_for(sample_id: str) -> str:
    return f"locomo-{sample_id}"


@dataclass
class IngestTiming:
    memories: int = 0
    write_s: float = 0.0
    embed_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.write_s + self.embed_s


@dataclass
class AskOutcome:
    results: list[QuestionResult] = field(default_factory=list)
    modes_seen: set[str] = field(default_factory=set)
    fallbacks: int = 0
    #: Results whose sample_id is not the question's: must stay 0 (subject isolation).
    foreign_results: int = 0


class EmbeddingCache:
    """Vectors of earlier runs by content hash and provider (a lab shortcut for re-runs that
    change only ranking or derived context: the same text gets the same vector the embedding
    task would compute). Rows it has no vector for go through ``memory_embed_pending``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # The endpoint names the model (the local one included): vectors of two models never mix.
        self.key = f"{EmbeddingConfig.default().endpoint_key}:{settings.EMBEDDING_DIMENSIONS}"
        data = json.loads(path.read_text()) if path.is_file() else {}
        self.vectors: dict[str, list[float]] = data.get(self.key, {})

    def fill(self, ids: Sequence[str]) -> list[str]:
        """Write the cached vectors; returns the ids still to embed."""
        rows = Memory.objects.filter(pk__in=list(ids)).only("pk", "embedding_content_hash")
        hits, missing = [], []
        now = timezone.now()
        model = EmbeddingConfig.default().fingerprint
        for row in rows:
            vector = self.vectors.get(row.embedding_content_hash)
            if vector is None:
                missing.append(str(row.pk))
            else:
                row.embedding, row.embedded_at, row.embedding_model = vector, now, model
                hits.append(row)
        Memory.objects.bulk_update(
            hits, ["embedding", "embedded_at", "embedding_model"], batch_size=500
        )
        return missing

    def learn(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        rows = Memory.objects.filter(pk__in=list(ids)).values_list(
            "embedding_content_hash", "embedding"
        )
        for content_hash, vector in rows:
            if vector is not None:
                self.vectors[content_hash] = [float(v) for v in vector]
        data = json.loads(self.path.read_text()) if self.path.is_file() else {}
        data[self.key] = self.vectors
        self.path.write_text(json.dumps(data))


def evaluation_tenant_create() -> Tenant:
    return tenant_create(slug=f"recall-eval-{secrets.token_hex(4)}", name="recall_eval (LoCoMo)")


def ingest(
    *,
    tenant: Tenant,
    conversations: Sequence[Conversation],
    context_turns: int,
    loader: str = LOADER_CLIENT,
    cache: EmbeddingCache | None = None,
    progress: Progress | None = None,
    dated: bool = False,
) -> IngestTiming:
    """One subject per conversation, one memory per turn (or per fact); returns once every
    row is embedded. ``dated``: each memory's ``occurred_at`` is its session's date-time (read
    as UTC), as a client replaying history would send it; otherwise the time of the write."""
    timing = IngestTiming()
    # A batch write as POST /memory/batch makes it, or one call per memory (POST /memory).
    batch = 1 if loader == LOADER_FACTS else settings.MEMORY_BATCH_MAX_ITEMS
    for conversation in conversations:
        specs = loader_specs(conversation, loader, context_turns=context_turns)
        # Exactly the draft the write API builds from {text, context?, metadata}.
        drafts = [
            MemoryDraft(
                text=spec.text,
                context=spec.context,
                metadata=spec.metadata,
                occurred_at=_session_time(spec.metadata) if dated else None,
            )
            for spec in specs
        ]
        started = time.perf_counter()
        ids: list[str] = []
        for start in range(0, len(drafts), batch):
            created, _turns = memory_write_batch(
                tenant=tenant,
                subject_id=subject_for(conversation.sample_id),
                memories=drafts[start : start + batch],
                turns=[],
            )
            ids.extend(str(memory.pk) for memory in created)
        timing.write_s += time.perf_counter() - started
        started = time.perf_counter()
        pending = ids if cache is None else cache.fill(ids)
        for start in range(0, len(pending), EMBED_BATCH):
            run = memory_embed_pending(memory_ids=pending[start : start + EMBED_BATCH])
            if run.unavailable:
                raise RuntimeError(f"embeddings unavailable: {run.unavailable}")
        if cache is not None:
            cache.learn(pending)
        timing.embed_s += time.perf_counter() - started
        timing.memories += len(ids)
        if progress is not None:
            progress(conversation.sample_id, len(ids))
    return timing


def _session_time(metadata: dict[str, Any]) -> datetime | None:
    value = metadata.get("session_date")
    return datetime.fromisoformat(value).replace(tzinfo=UTC) if value else None


def ask(
    *,
    tenant: Tenant,
    conversations: Sequence[Conversation],
    mode: str | None,
    progress: Progress | None = None,
) -> AskOutcome:
    """Every scorable question through ``memory_recall(limit=50)``, timed on the service path."""
    outcome = AskOutcome()
    for conversation in conversations:
        subject_id = subject_for(conversation.sample_id)
        for question in conversation.questions:
            started = time.perf_counter()
            result = memory_recall(
                tenant=tenant,
                subject_id=subject_id,
                query=question.question,
                limit=RECALL_LIMIT,
                mode=mode,
            )
            latency_ms = (time.perf_counter() - started) * 1000
            outcome.modes_seen.add(str(result.meta.get("mode")))
            outcome.fallbacks += bool(result.meta.get("fallback"))
            retrieved: list[Retrieved] = []
            for hit in result.results:
                metadata: dict[str, Any] = hit.memory.metadata or {}
                if metadata.get("sample_id") != conversation.sample_id:
                    outcome.foreign_results += 1
                if "source_dia_ids" in metadata:
                    retrieved.append(tuple(str(i) for i in metadata["source_dia_ids"]))
                else:
                    retrieved.append(str(metadata.get("dia_id", "")))
            outcome.results.append(
                QuestionResult(
                    sample_id=conversation.sample_id,
                    category=question.category,
                    evidence=question.evidence,
                    retrieved=tuple(retrieved),
                    latency_ms=latency_ms,
                )
            )
        if progress is not None:
            progress(conversation.sample_id, len(conversation.questions))
    return outcome


def evaluation_tenant_remove(*, tenant: Tenant) -> int:
    """Delete the throwaway tenant and every memory it owns; returns memories deleted."""
    wait_for_pending_bumps()
    with transaction.atomic(using=PRIMARY):
        # Superseded chains point at rows of the same tenant; clear them so order is moot.
        Memory.objects.filter(tenant=tenant).update(superseded_by=None)
        deleted, _ = Memory.objects.filter(tenant=tenant).delete()
        Tenant.objects.filter(pk=tenant.pk).delete()
    return deleted


# --- recall over HTTP ----------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
HTTP_RECALL_LIMIT = 10
HTTP_WARMUP_QUERIES = 20


@dataclass
class HttpLatency:
    queries: int = 0
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "server": "gunicorn -c config/gunicorn.py",
            "limit": HTTP_RECALL_LIMIT,
            "queries": self.queries,
            "errors": self.errors,
            "p50": round(percentile(self.latencies_ms, 0.50), 2),
            "p95": round(percentile(self.latencies_ms, 0.95), 2),
            "p99": round(percentile(self.latencies_ms, 0.99), 2),
        }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the web server exited before it served")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the web server did not start")


def agent_keys(*, tenant: Tenant, conversations: Sequence[Conversation]) -> dict[str, str]:
    """One agent key per conversation, scoped to its subject, as a client holds it."""
    return {
        c.sample_id: api_key_create(
            tenant=tenant, role=ApiKeyRole.AGENT, agent_id=subject_for(c.sample_id)
        ).raw_key
        for c in conversations
    }


@contextmanager
def web_server() -> Iterator[str]:
    """The web tier as ``make run`` starts it (gunicorn with ``config/gunicorn.py``: its
    processes, threads and embedding threads) on a free loopback port; yields the API's base
    URL (``http://127.0.0.1:<port>/api/v1``) and stops the server on leaving."""
    port = _free_port()
    env = {
        **os.environ,
        "ENGRAM_WEB_BIND": f"127.0.0.1:{port}",
        "ENGRAM_WEB_ACCESS_LOG": "/dev/null",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-c", "config/gunicorn.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, server, 120)
        yield f"http://127.0.0.1:{port}/api/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def http_latency(
    *,
    tenant: Tenant,
    conversations: Sequence[Conversation],
    mode: str | None,
    max_queries: int | None = None,
) -> HttpLatency:
    """``POST /api/v1/memory/recall {query, limit: 10}`` for every question, one at a time,
    against :func:`web_server`, one agent key per conversation's subject. The clock runs from
    sending the request to reading the whole response, so the query embedding, auth, rate
    limit, both legs and rendering are all in it."""
    keys = agent_keys(tenant=tenant, conversations=conversations)
    outcome = HttpLatency()
    with web_server() as url:
        questions = [(c.sample_id, q.question) for c in conversations for q in c.questions]
        if max_queries is not None:
            questions = questions[:max_queries]
        body_extra = {} if mode is None else {"mode": mode}
        http = KeepAliveClient(url)
        try:

            def recall(sample_id: str, query: str) -> str:
                body = {"query": query, "limit": HTTP_RECALL_LIMIT, **body_extra}
                return http.post("/memory/recall", body, token=keys[sample_id])

            # Every worker process loads its model and prepares its statements first, on
            # texts of their own (a measured question must not find its vector kept).
            for sample_id, query in questions[:HTTP_WARMUP_QUERIES]:
                recall(sample_id, f"{query} (warm-up)")
            for sample_id, query in questions:
                started = time.perf_counter()
                status = recall(sample_id, query)
                elapsed = (time.perf_counter() - started) * 1000
                outcome.queries += 1
                if status != "200":
                    outcome.errors += 1
                    continue
                outcome.latencies_ms.append(elapsed)
        finally:
            http.close()
    return outcome
