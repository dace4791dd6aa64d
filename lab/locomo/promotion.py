"""Promotion on real conversations: LoCoMo sessions through the session tier and promotion.

For each conversation, in a throwaway tenant of its own (so the per-tenant hourly promotion
budget is the product's, untouched), three stores are built and asked the same questions:

* ``turns``: every turn as a memory (nothing distilled away; the recall benchmark's mode A);
* ``observations``: LoCoMo's LLM-written per-session observations as memories;
* ``promoted``: each session written turn by turn to the session tier
  (``session_append_many``, speaker A as ``user``, speaker B as ``assistant``, content
  ``"{speaker}: {text}"``, the session's date-time as the turn's ``occurred_at``), then
  promoted through ``promotion_request`` with the deployment's compiler, the job run by the
  Celery task in-process (eager), and what promotion kept is what is asked.

Every category 1-4 question is asked through ``memory_recall(limit=10)`` in the default mode.
The metric is answer coverage: the share of the answer's content words (lower-cased, stop words
dropped) that appear in the ten recalled texts; ``full`` is 1 when all of them do.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.test import override_settings

from apps.memory.models import (
    Memory,
    MemorySource,
    PromotionJob,
    PromotionJobStatus,
    SessionRole,
)
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_create_many,
    memory_embed_pending,
    promotion_request,
    promotion_run,
    session_append_many,
)
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab.locomo.dataset import Conversation, Session, memory_specs
from lab.locomo.harness import EMBED_BATCH, evaluation_tenant_remove

RECALL_LIMIT = 10
STORES = ("turns", "observations", "promoted")
#: Rules, thresholds and weights are chosen on these conversations only.
DEV_SPLIT = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44")
#: Run to report, never to choose anything.
HELDOUT_SPLIT = ("conv-47", "conv-48", "conv-49", "conv-50")
SPLITS = {"dev": DEV_SPLIT, "held_out": HELDOUT_SPLIT}
SUBJECT_PREFIX = "locomo-"

_WORD = re.compile(r"[a-z0-9]+")
#: Function words that carry no answer (a standard English list plus "yes", the twin of "no";
#: "may" stays: it is a month here).
_STOP_WORDS_TEXT = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not of off on once only or other ought our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
s t d ll m re ve also yes
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

Progress = Callable[[str, str], None]


# --- metric (pure) -------------------------------------------------------------------------


def content_words(text: str) -> frozenset[str]:
    """Lower-cased alphanumeric words of ``text`` minus stop words."""
    return frozenset(word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS)


def answer_coverage(answer: str, texts: Iterable[str]) -> float | None:
    """Share of the answer's content words found in ``texts``; None when it has none."""
    wanted = content_words(answer)
    if not wanted:
        return None
    found = content_words("\n".join(texts))
    return len(wanted & found) / len(wanted)


@dataclass(frozen=True)
class CoverageResult:
    sample_id: str
    category: int
    coverage: float

    @property
    def full(self) -> bool:
        return self.coverage >= 1.0


@dataclass
class StoreTotals:
    memories: int = 0
    sessions: int = 0
    questions: int = 0
    coverage: float = 0.0
    full: float = 0.0

    @property
    def per_session(self) -> float:
        return self.memories / self.sessions if self.sessions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "memories": self.memories,
            "sessions": self.sessions,
            "memories_per_session": round(self.per_session, 2),
            "questions": self.questions,
            "coverage_at_10": round(self.coverage, 4),
            "full_at_10": round(self.full, 4),
        }


def totals(
    results: Sequence[CoverageResult], *, memories: dict[str, int], sessions: dict[str, int]
) -> StoreTotals:
    """Micro averages over ``results``; memories and sessions summed over the conversations
    that ``memories`` names."""
    count = len(results)
    return StoreTotals(
        memories=sum(memories.values()),
        sessions=sum(sessions[sample_id] for sample_id in memories),
        questions=count,
        coverage=sum(r.coverage for r in results) / count if count else 0.0,
        full=sum(1 for r in results if r.full) / count if count else 0.0,
    )


# --- running ---------------------------------------------------------------------------------


@dataclass
class StoreRun:
    memories: dict[str, int] = field(default_factory=dict)
    results: list[CoverageResult] = field(default_factory=list)


@dataclass
class PromotionStats:
    """Per-session promotion figures for the promoted store."""

    sessions: int = 0
    jobs: dict[str, int] = field(default_factory=dict)
    compile_ms: list[float] = field(default_factory=list)
    promote_ms: list[float] = field(default_factory=list)
    superseded: int = 0
    #: Rows (live and superseded) added by promoting every session a second time: must be 0.
    repromote_rows_added: int = 0
    repromote_reasons: dict[str, int] = field(default_factory=dict)


@dataclass
class BenchmarkRun:
    stores: dict[str, StoreRun]
    sessions: dict[str, int]
    promotion: PromotionStats
    questions_without_content_words: int = 0
    tenants_removed: int = 0


def session_datetime(session: Session) -> datetime | None:
    """The session's date-time (LoCoMo gives no zone: read as UTC)."""
    return session.date.replace(tzinfo=UTC) if session.date is not None else None


def session_key(sample_id: str, session: Session) -> str:
    return f"{sample_id}-session-{session.number}"


def turn_drafts(conversation: Conversation, session: Session) -> list[SessionTurnDraft]:
    speaker_a = conversation.speakers[0]
    return [
        SessionTurnDraft(
            session_id=session_key(conversation.sample_id, session),
            content=f"{turn.speaker}: {turn.text}",
            role=SessionRole.USER if turn.speaker == speaker_a else SessionRole.ASSISTANT,
            metadata={"dia_id": turn.dia_id},
            ttl_seconds=settings.SESSION_DEFAULT_TTL_SECONDS,
            occurred_at=session_datetime(session),
        )
        for turn in session.turns
    ]


def _write(*, tenant: Tenant, subject_id: str, drafts: Sequence[MemoryDraft]) -> int:
    ids: list[str] = []
    batch = settings.MEMORY_BATCH_MAX_ITEMS
    for start in range(0, len(drafts), batch):
        created = memory_create_many(
            tenant=tenant, subject_id=subject_id, drafts=drafts[start : start + batch]
        )
        ids.extend(str(memory.pk) for memory in created)
    for start in range(0, len(ids), EMBED_BATCH):
        run = memory_embed_pending(memory_ids=ids[start : start + EMBED_BATCH])
        if run.unavailable:
            raise RuntimeError(f"embeddings unavailable: {run.unavailable}")
    return len(ids)


def _turn_drafts(conversation: Conversation) -> list[MemoryDraft]:
    return [
        MemoryDraft(text=spec.text, context=spec.context, metadata=spec.metadata)
        for spec in memory_specs(conversation)
    ]


def _observation_drafts(conversation: Conversation) -> list[MemoryDraft]:
    dates = {s.number: s.date for s in conversation.sessions}
    drafts = []
    for observation in conversation.observations:
        date = dates.get(observation.session)
        drafts.append(
            MemoryDraft(
                text=observation.text,
                context=f"{date:%d %B %Y}" if date is not None else "",
                metadata={
                    "sample_id": conversation.sample_id,
                    "session": observation.session,
                    "source_dia_ids": list(observation.source_dia_ids),
                },
            )
        )
    return drafts


# Promotions one replay may request in an hour: more than a conversation has sessions.
REPLAY_BUDGET_PER_HOUR = 100_000


@contextmanager
def replay_budget() -> Iterator[None]:
    """Lift the hourly promotion budgets for a replay: a conversation's months of sessions are
    promoted here within seconds, and the budgets bound how fast a client may ask, not what
    promotion keeps."""
    with override_settings(
        PROMOTION_BUDGET_PER_HOUR=REPLAY_BUDGET_PER_HOUR,
        PROMOTION_SUBJECT_BUDGET_PER_HOUR=REPLAY_BUDGET_PER_HOUR,
    ):
        yield


def _promote(
    *, tenant: Tenant, subject_id: str, conversation: Conversation, stats: PromotionStats
) -> int:
    """Every session through the session tier and promotion; returns live promoted rows."""
    with replay_budget():
        return _promote_sessions(
            tenant=tenant, subject_id=subject_id, conversation=conversation, stats=stats
        )


def _promote_sessions(
    *, tenant: Tenant, subject_id: str, conversation: Conversation, stats: PromotionStats
) -> int:
    from config.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True  # the job runs in-process when the request commits
    try:
        for session in conversation.sessions:
            drafts = turn_drafts(conversation, session)
            session_append_many(tenant=tenant, subject_id=subject_id, drafts=drafts)
            started = time.perf_counter()
            request = promotion_request(
                tenant=tenant, subject_id=subject_id, session_id=drafts[0].session_id
            )
            job = (
                PromotionJob.objects.filter(pk=request.job_id).first()
                if request.job_id is not None
                else None
            )
            if job is not None and job.status == PromotionJobStatus.QUEUED:
                # Inside an outer transaction (a test) the on-commit enqueue has not fired:
                # run the task body here, as the eager task would have.
                promotion_run(job_id=job.pk)
                job.refresh_from_db()
            stats.promote_ms.append((time.perf_counter() - started) * 1000)
            stats.sessions += 1
            status = job.status if job is not None else request.reason
            stats.jobs[status] = stats.jobs.get(status, 0) + 1
            if job is not None and "compile_ms" in job.outcome:
                stats.compile_ms.append(float(job.outcome["compile_ms"]))
        before = Memory.objects.filter(tenant=tenant, subject_id=subject_id).count()
        for session in conversation.sessions:
            again = promotion_request(
                tenant=tenant,
                subject_id=subject_id,
                session_id=session_key(conversation.sample_id, session),
            )
            stats.repromote_reasons[again.reason] = stats.repromote_reasons.get(again.reason, 0) + 1
        stats.repromote_rows_added += (
            Memory.objects.filter(tenant=tenant, subject_id=subject_id).count() - before
        )
    finally:
        app.conf.task_always_eager = eager
    promoted = Memory.objects.filter(
        tenant=tenant, subject_id=subject_id, source=MemorySource.PROMOTED
    )
    stats.superseded += promoted.filter(superseded_by__isnull=False).count()
    return promoted.filter(superseded_by__isnull=True).count()


def _ask(
    *, tenant: Tenant, subject_id: str, conversation: Conversation
) -> tuple[list[CoverageResult], int]:
    results = []
    skipped = 0
    for question in conversation.questions:
        if not content_words(question.answer):
            skipped += 1
            continue
        recalled = memory_recall(
            tenant=tenant, subject_id=subject_id, query=question.question, limit=RECALL_LIMIT
        )
        coverage = answer_coverage(question.answer, [hit.memory.text for hit in recalled.results])
        results.append(
            CoverageResult(
                sample_id=conversation.sample_id,
                category=question.category,
                coverage=coverage or 0.0,
            )
        )
    return results, skipped


def run_benchmark(
    conversations: Sequence[Conversation],
    *,
    stores: Sequence[str] = STORES,
    progress: Progress | None = None,
) -> BenchmarkRun:
    """Build the chosen stores for every conversation, ask, and remove the tenants."""
    run = BenchmarkRun(
        stores={store: StoreRun() for store in stores}, sessions={}, promotion=PromotionStats()
    )
    builders: dict[str, Callable[[Tenant, str, Conversation], int]] = {
        "turns": lambda t, s, c: _write(tenant=t, subject_id=s, drafts=_turn_drafts(c)),
        "observations": lambda t, s, c: _write(
            tenant=t, subject_id=s, drafts=_observation_drafts(c)
        ),
        "promoted": lambda t, s, c: _promote(
            tenant=t, subject_id=s, conversation=c, stats=run.promotion
        ),
    }
    for conversation in conversations:
        run.sessions[conversation.sample_id] = len(conversation.sessions)
        tenant = tenant_create(
            slug=f"promotion-eval-locomo-{secrets.token_hex(4)}",
            name=f"promotion_eval (LoCoMo {conversation.sample_id})",
        )
        try:
            for store in stores:
                subject_id = f"{SUBJECT_PREFIX}{store}"
                kept = builders[store](tenant, subject_id, conversation)
                run.stores[store].memories[conversation.sample_id] = kept
                results, skipped = _ask(
                    tenant=tenant, subject_id=subject_id, conversation=conversation
                )
                run.stores[store].results.extend(results)
                if store == stores[0]:
                    run.questions_without_content_words += skipped
                if progress is not None:
                    progress(conversation.sample_id, store)
        finally:
            evaluation_tenant_remove(tenant=tenant)
            run.tenants_removed += 1
    return run


def report(run: BenchmarkRun) -> dict[str, Any]:
    """Figures for every store: all conversations run, then each split that was run."""

    def block(sample_ids: set[str]) -> dict[str, Any]:
        return {
            store: totals(
                [r for r in store_run.results if r.sample_id in sample_ids],
                memories={k: v for k, v in store_run.memories.items() if k in sample_ids},
                sessions=run.sessions,
            ).as_dict()
            for store, store_run in run.stores.items()
        }

    ran = set(run.sessions)
    stats = run.promotion
    data: dict[str, Any] = {
        "conversations": sorted(ran),
        "recall_limit": RECALL_LIMIT,
        "recall_mode": settings.MEMORY_RECALL_DEFAULT_MODE,
        "compiler": settings.LLM_PROVIDER,
        "questions_without_content_words": run.questions_without_content_words,
        "all": block(ran),
        "splits": {name: block(ran & set(ids)) for name, ids in SPLITS.items() if ran & set(ids)},
        "tenants_removed": run.tenants_removed,
    }
    if "promoted" in run.stores:
        data["promotion"] = {
            "sessions": stats.sessions,
            "jobs": dict(sorted(stats.jobs.items())),
            "superseded": stats.superseded,
            "compile_ms_per_session": round(sum(stats.compile_ms) / len(stats.compile_ms), 2)
            if stats.compile_ms
            else None,
            "promote_ms_per_session": round(sum(stats.promote_ms) / len(stats.promote_ms), 1)
            if stats.promote_ms
            else None,
            "repromote_rows_added": stats.repromote_rows_added,
            "repromote_reasons": dict(sorted(stats.repromote_reasons.items())),
        }
    return data
