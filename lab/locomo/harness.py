"""Run LoCoMo against the real memory services: ingest, embed, ask, tear down.

Everything goes through the code paths the API uses: ``memory_create_many`` to write,
``memory_embed_pending`` to embed (what the on-commit task runs), ``memory_recall`` to ask.
The throwaway tenant and every row it owns are removed by :func:`evaluation_tenant_remove`.
Nothing here runs on a request path.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.core.db.routers import PRIMARY
from apps.memory.models import Memory
from apps.memory.recall_bump import wait_for_pending_bumps
from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_create_many, memory_embed_pending
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab.locomo.dataset import Conversation, QuestionResult, memory_specs

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


def evaluation_tenant_create() -> Tenant:
    return tenant_create(slug=f"recall-eval-{secrets.token_hex(4)}", name="recall_eval (LoCoMo)")


def ingest(
    *,
    tenant: Tenant,
    conversations: Sequence[Conversation],
    context_turns: int,
    progress: Progress | None = None,
) -> IngestTiming:
    """One subject per conversation, one memory per turn; returns once every row is embedded."""
    timing = IngestTiming()
    batch = settings.MEMORY_BATCH_MAX_ITEMS
    for conversation in conversations:
        specs = memory_specs(conversation, context_turns=context_turns)
        drafts = [
            MemoryDraft(text=spec.text, context=spec.context, metadata=spec.metadata)
            for spec in specs
        ]
        started = time.perf_counter()
        ids: list[str] = []
        for start in range(0, len(drafts), batch):
            created = memory_create_many(
                tenant=tenant,
                subject_id=subject_for(conversation.sample_id),
                drafts=drafts[start : start + batch],
            )
            ids.extend(str(memory.pk) for memory in created)
        timing.write_s += time.perf_counter() - started
        started = time.perf_counter()
        for start in range(0, len(ids), EMBED_BATCH):
            run = memory_embed_pending(memory_ids=ids[start : start + EMBED_BATCH])
            if run.unavailable:
                raise RuntimeError(f"embeddings unavailable: {run.unavailable}")
        timing.embed_s += time.perf_counter() - started
        timing.memories += len(ids)
        if progress is not None:
            progress(conversation.sample_id, len(ids))
    return timing


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
            retrieved = []
            for hit in result.results:
                metadata: dict[str, Any] = hit.memory.metadata or {}
                if metadata.get("sample_id") != conversation.sample_id:
                    outcome.foreign_results += 1
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
