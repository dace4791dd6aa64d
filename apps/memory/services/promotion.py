# length: the pipeline's stages in the order they run; split, that order would be scattered.
"""The promotion pipeline (spec "Promotion lifecycle"): trigger → watermark → budget →
compile → confidence gate → hash dedupe / supersede → long-term memory → watermark.

Unattended and fail-closed: every stage is scoped to one (tenant, subject, session), bounded
by the hourly budget and the subject's quota, idempotent through the watermark, and treats the
session's content (and the model's output) as data.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, connections
from django.db.models import Count, ExpressionWrapper, F, FloatField, Q, Value
from django.utils import timezone

from apps.core.db.on_commit import after_commit
from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import savepoint, unit_of_work, write_transaction
from apps.core.exceptions import ValidationFailed
from apps.core.telemetry import emit
from apps.extraction.promotion.compiler import (
    CompileFailed,
    compile_turns,
    compiler_name,
    is_recalled_context,
    session_fingerprint,
    turn_window,
)
from apps.extraction.promotion.types import Candidate, Turn
from apps.memory.exceptions import BudgetExceeded, MemoryErrorCode, ReservedSubject
from apps.memory.models import (
    PROMOTION_BUDGET_STATUSES,
    SESSION_ID_MAX_LENGTH,
    Memory,
    MemorySource,
    PromotionJob,
    PromotionJobStatus,
    PromotionTrigger,
    SessionMemory,
    SessionPromotion,
    SupersedeReason,
)
from apps.memory.services.changes import memory_apply_change_decisions, memory_detect_changes
from apps.memory.services.promotion_changes import StatementChanges, promotion_change_decisions
from apps.memory.services.promotion_lease import (
    TENANT_HALTED,
    UNEXPECTED_ERROR,
    enqueue_job,
    job_claim,
    job_fail,
    job_finish,
    job_is_stale,
    job_reap,
    job_release,
)
from apps.memory.services.promotion_referents import promotion_with_referents
from apps.memory.services.rows import MemoryDraft, memory_admission, memory_build, memory_insert
from apps.memory.services.scope_lock import lock_memory_scope
from apps.memory.services.tombstones import tombstoned
from apps.memory.services.validity import RETIRE_FIELDS, memory_retire
from apps.providers.embeddings import EmbeddingsUnavailable, embed_texts, embedding_content_hash
from apps.tenancy.models import Tenant
from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX
from apps.tenancy.selectors import tenant_embedding_config, tenant_llm_config
from apps.tenancy.services import tenant_hold_unhalted

BUDGET_WINDOW = timedelta(hours=1)
logger = logging.getLogger(__name__)


class PromotionHalted(Exception):
    """The tenant was halted while the job ran: nothing was written."""


class PromotionSnoozed(Exception):
    """Embeddings are unavailable: nothing was written; run the job again later."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# ----------------------------------------------------------------------------- helpers


def _session_turns(*, tenant: Tenant, subject_id: str, session_id: str) -> list[SessionMemory]:
    """The caller's own turns in order — the scope of ``session_history``, plus the expired
    turns the prune holds back until promotion has seen them."""
    return list(
        SessionMemory.objects.filter(
            tenant=tenant, subject_id=subject_id, session_id=session_id
        ).order_by("seq")
    )


def _watermark(*, tenant: Tenant, subject_id: str, session_id: str) -> str | None:
    return (
        SessionPromotion.objects.filter(tenant=tenant, subject_id=subject_id, session_id=session_id)
        .values_list("content_hash", flat=True)
        .first()
    )


def _lock_tenant_budget(tenant: Tenant) -> None:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"promotion-budget:{tenant.pk}"],
        )


#: The budgets a compile is charged to: the subject's share, then the tenant's whole.
BUDGET_SCOPES = ("subject", "tenant")


def _budget_limits() -> dict[str, int]:
    return {
        "subject": settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR,
        "tenant": settings.PROMOTION_BUDGET_PER_HOUR,
    }


def _budget_spent(
    *, tenant: Tenant, subject_id: str, now: datetime, before: PromotionJob | None = None
) -> str | None:
    """The budget that compiles reserved in the hour before ``now`` (completed, failed and in
    flight) have spent, ``"subject"`` or ``"tenant"``, or None while both have room.

    The subject's share keeps one agent from spending the whole tenant's budget. With
    ``before``, only jobs reserved earlier than that job count (the worker's re-check must not
    let a later reservation evict an earlier one).
    """
    jobs = PromotionJob.objects.filter(
        tenant=tenant, created_at__gt=now - BUDGET_WINDOW, status__in=PROMOTION_BUDGET_STATUSES
    )
    if before is not None:
        jobs = jobs.filter(created_at__lt=before.created_at).exclude(pk=before.pk)
    used = jobs.aggregate(tenant=Count("pk"), subject=Count("pk", filter=Q(subject_id=subject_id)))
    limits = _budget_limits()
    return next((scope for scope in BUDGET_SCOPES if used[scope] >= limits[scope]), None)


def _retry_after_seconds(*, tenant: Tenant, subject_id: str, scope: str, now: datetime) -> int:
    jobs = PromotionJob.objects.filter(
        tenant=tenant, created_at__gt=now - BUDGET_WINDOW, status__in=PROMOTION_BUDGET_STATUSES
    )
    if scope == "subject":
        jobs = jobs.filter(subject_id=subject_id)
    oldest = jobs.order_by("created_at").values_list("created_at", flat=True).first()
    if oldest is None:
        return 1
    return max(1, int((oldest + BUDGET_WINDOW - now).total_seconds()) + 1)


def validate_promotion_session_id(session_id: object) -> str:
    if (
        not isinstance(session_id, str)
        or not session_id.strip()
        or len(session_id) > SESSION_ID_MAX_LENGTH
    ):
        raise ValidationFailed(
            f"session_id must be a string of 1–{SESSION_ID_MAX_LENGTH} characters.",
            code=MemoryErrorCode.INVALID_SESSION_ID,
        )
    return session_id


# ----------------------------------------------------------------------------- trigger


@dataclass(frozen=True)
class PromotionRequest:
    session_id: str
    enqueued: bool
    reason: str  # enqueued | already_queued | unchanged | too_few_turns | budget_exceeded
    job_id: uuid.UUID | None = None


def promotion_request(
    *,
    tenant: Tenant,
    subject_id: str,
    session_id: str,
    trigger: str = PromotionTrigger.EXPLICIT,
) -> PromotionRequest:
    """Reserve a compile for one session and enqueue it, or say why not.

    Explicit triggers raise :class:`BudgetExceeded` (429, before any LLM call) when the
    subject's share of the hourly budget or the tenant's whole budget is spent; the sweep gets
    ``reason="budget_exceeded"`` instead.
    """
    session_id = validate_promotion_session_id(session_id)
    if subject_id.startswith(RESERVED_SUBJECT_PREFIX):
        raise ReservedSubject("Reserved subjects are never promoted.")
    turns = _session_turns(tenant=tenant, subject_id=subject_id, session_id=session_id)
    if len(turns) < 2:
        # 0/1-turn sessions are no-ops that write no watermark and spend no budget.
        return PromotionRequest(session_id=session_id, enqueued=False, reason="too_few_turns")
    fingerprint = session_fingerprint([(turn.role, turn.content) for turn in turns])
    if fingerprint == _watermark(tenant=tenant, subject_id=subject_id, session_id=session_id):
        emit("memory_promotion.skipped", {"count": 1}, {"reason": "unchanged", "at": "trigger"})
        return PromotionRequest(session_id=session_id, enqueued=False, reason="unchanged")
    now = timezone.now()
    # A unit of work: reaping a lost job (its own service) joins this transaction.
    with unit_of_work():
        _lock_tenant_budget(tenant)
        in_flight = PromotionJob.objects.filter(
            tenant=tenant,
            subject_id=subject_id,
            session_id=session_id,
            status__in=(PromotionJobStatus.QUEUED, PromotionJobStatus.RUNNING),
        ).first()
        if in_flight is not None and not (
            job_is_stale(in_flight, now=now) and job_reap(job=in_flight, now=now) == "failed"
        ):
            # A live job, or a lost one the reaper just sent again: either way it will run.
            return PromotionRequest(
                session_id=session_id, enqueued=False, reason="already_queued", job_id=in_flight.pk
            )
        spent = _budget_spent(tenant=tenant, subject_id=subject_id, now=now)
        if spent is not None:
            event = "budget_exceeded" if spent == "tenant" else "subject_budget_exceeded"
            emit(f"memory_promotion.{event}", {"count": 1}, {"trigger": trigger})
            if trigger == PromotionTrigger.SWEEP:
                return PromotionRequest(
                    session_id=session_id, enqueued=False, reason="budget_exceeded"
                )
            raise BudgetExceeded(
                f"This {spent}'s hourly promotion budget is spent.",
                retry_after_seconds=_retry_after_seconds(
                    tenant=tenant, subject_id=subject_id, scope=spent, now=now
                ),
                details={"scope": spent, "budget_per_hour": _budget_limits()[spent]},
            )
        try:
            with savepoint():
                job = PromotionJob.objects.create(
                    tenant=tenant,
                    subject_id=subject_id,
                    session_id=session_id,
                    trigger=trigger,
                    enqueued_at=now,
                )
        except IntegrityError:
            # Another process reserved this session between our check and insert (the
            # partial unique index on in-flight jobs is the structural backstop).
            return PromotionRequest(session_id=session_id, enqueued=False, reason="already_queued")
        # robust: the job row is committed; with the broker down the reaper re-sends it.
        after_commit(enqueue_job(job.pk))
    return PromotionRequest(session_id=session_id, enqueued=True, reason="enqueued", job_id=job.pk)


# ----------------------------------------------------------------------------- persist


@dataclass
class PersistOutcome:
    promoted: int = 0
    superseded: int = 0
    gated_out: int = 0
    forgotten: int = 0
    dropped_quota: int = 0
    cross_links_stripped: int = 0
    #: Older memories a promoted one retired as changed, and pairs flagged as conflicting.
    changed: int = 0
    conflicts: int = 0
    memory_ids: list[str] = field(default_factory=list)


def _visible_links(*, tenant: Tenant, subject_id: str, links: Sequence[str]) -> set[str]:
    from apps.knowledge.selectors import visible_article_ids
    from apps.knowledge.viewer import Viewer

    ids = {
        str(article_id)
        for article_id in visible_article_ids(
            tenant=tenant, viewer=Viewer.for_subject(subject_id), ids=list(links)
        )
    }
    return ids


def _nearest_promoted(
    *, tenant: Tenant, subject_id: str, vector: list[float], model: str
) -> tuple[Memory, float] | None:
    """The subject's live promoted memory nearest ``vector``, found exactly: ordered by
    ``distance + 0``, which the HNSW index cannot serve. An index scan would return the
    nearest rows of the whole table, other tenants' and dead ones included, and the filters
    would leave none of them for a subject with few promoted memories."""
    from pgvector.django import CosineDistance

    exact_distance = ExpressionWrapper(
        CosineDistance("embedding", vector) + Value(0.0), output_field=FloatField()
    )
    row = (
        Memory.objects.filter(
            tenant=tenant,
            subject_id=subject_id,
            source=MemorySource.PROMOTED,
            superseded_by__isnull=True,
            embedding__isnull=False,
            # Only vectors of the model that made `vector` are comparable with it.
            embedding_model=model,
        )
        .annotate(distance=exact_distance)
        .order_by("distance")
        .only(*RETIRE_FIELDS)
        .first()
    )
    if row is None:
        return None
    return row, 1.0 - float(row.distance)


def _embed_candidates(
    *, tenant: Tenant, candidates: Sequence[Candidate]
) -> tuple[list[list[float]], str]:
    """Embed before writing, so no paraphrase slips past near-duplicate detection; the
    vectors and their model's fingerprint."""
    config = tenant_embedding_config(tenant=tenant)
    try:
        return embed_texts(config, [candidate.text for candidate in candidates]), config.fingerprint
    except EmbeddingsUnavailable as exc:
        raise PromotionSnoozed(exc.reason) from exc


def _already_known(*, tenant: Tenant, subject_id: str, content_hash: str) -> bool:
    """The text is live in the subject, or was promoted before (even if since superseded)."""
    scoped = Memory.objects.filter(
        tenant=tenant, subject_id=subject_id, embedding_content_hash=content_hash
    )
    return (
        scoped.filter(superseded_by__isnull=True).exists()
        or scoped.filter(source=MemorySource.PROMOTED).exists()
    )


def _replaced_paraphrase(
    *, tenant: Tenant, subject_id: str, vector: list[float], model: str
) -> Memory | None:
    """The live promoted memory ``vector`` paraphrases, if one is near enough to replace."""
    nearest = _nearest_promoted(tenant=tenant, subject_id=subject_id, vector=vector, model=model)
    if nearest is None or nearest[1] < settings.PROMOTION_NEAR_DUPLICATE_THRESHOLD:
        return None
    return nearest[0]


def _promoted_draft(
    *,
    candidate: Candidate,
    vector: list[float],
    model: str,
    session_id: str,
    compiler: str,
    links: list[str],
) -> MemoryDraft:
    return MemoryDraft(
        text=candidate.text,
        embedding=vector,
        embedding_model=model,
        confidence=candidate.confidence,
        source=MemorySource.PROMOTED,
        source_session_id=session_id,
        source_turn_seqs=candidate.source_seqs,
        compiler=compiler,
        occurred_at=candidate.occurred_at,
        metadata={"kind": candidate.kind, "cross_links": links},
    )


def _emit_outcome(*, tenant: Tenant, outcome: PersistOutcome) -> None:
    for event, count in (
        ("memory_promotion.promoted", outcome.promoted),
        ("memory_promotion.superseded", outcome.superseded),
        ("memory_promotion.gated_out", outcome.gated_out),
        ("memory_promotion.forgotten", outcome.forgotten),
    ):
        if count:
            emit(event, {"count": count}, {"tenant_id": str(tenant.pk)})
    if outcome.dropped_quota:
        emit(
            "memory_promotion.discarded",
            {"count": outcome.dropped_quota},
            {"tenant_id": str(tenant.pk), "reason": "quota_exceeded"},
        )


def promotion_persist(
    *,
    tenant: Tenant,
    subject_id: str,
    session_id: str,
    candidates: Sequence[Candidate],
    compiler: str = "",
    changes: Mapping[int, StatementChanges] | None = None,
) -> PersistOutcome:
    """Write gated candidates as ``source: promoted`` memories (spec step 5).

    Embeds synchronously so no paraphrase slips past near-duplicate detection; an identical
    text is a no-op (``gated_out``); a text the subject forgot (a tombstone) is never written
    again (``forgotten``); a paraphrase above the near-duplicate threshold
    supersedes the prior *promoted* row — never an explicit one; cross_links are kept only
    when the subject can see the article. Raises :class:`PromotionSnoozed` (nothing written)
    when embeddings are unavailable and :class:`ReservedSubject` for the eval subject.

    ``changes``: the compiler model's word on which stored facts each candidate (by index)
    puts out of date (:func:`~apps.memory.services.promotion_changes.
    promotion_change_decisions`), applied in place of the offline change rules; ``None``: the
    rules decide.
    """
    if subject_id.startswith(RESERVED_SUBJECT_PREFIX):
        raise ReservedSubject("Reserved subjects never receive promoted memories.")
    outcome = PersistOutcome()
    if not candidates:
        return outcome
    vectors, model = _embed_candidates(tenant=tenant, candidates=candidates)
    all_links = sorted({link for candidate in candidates for link in candidate.cross_links})
    visible = (
        _visible_links(tenant=tenant, subject_id=subject_id, links=all_links)
        if all_links
        else set()
    )
    with write_transaction():
        if not tenant_hold_unhalted(tenant=tenant):
            raise PromotionHalted(TENANT_HALTED)
        lock_memory_scope(tenant=tenant, subject_id=subject_id)
        admission = memory_admission(tenant=tenant, subject_id=subject_id)
        room, history_room = admission.room, admission.history_room
        forgotten = tombstoned(
            tenant=tenant,
            subject_id=subject_id,
            content_hashes=[embedding_content_hash(candidate.text) for candidate in candidates],
        )
        # One candidate at a time: a later candidate may paraphrase an earlier one.
        for index, (candidate, vector) in enumerate(zip(candidates, vectors, strict=True)):
            content_hash = embedding_content_hash(candidate.text)
            if content_hash in forgotten:
                outcome.forgotten += 1
                continue
            if _already_known(tenant=tenant, subject_id=subject_id, content_hash=content_hash):
                outcome.gated_out += 1
                continue
            replaces = _replaced_paraphrase(
                tenant=tenant, subject_id=subject_id, vector=vector, model=model
            )
            # A paraphrase that would pass the history quota is dropped like one past the
            # live quota: the fact it restates is already known.
            if (room if replaces is None else history_room) <= 0:
                outcome.dropped_quota += 1
                continue
            kept_links = [link for link in candidate.cross_links if link in visible]
            outcome.cross_links_stripped += len(candidate.cross_links) - len(kept_links)
            draft = _promoted_draft(
                candidate=candidate,
                vector=vector,
                model=model,
                session_id=session_id,
                compiler=compiler,
                links=kept_links,
            )
            memory = memory_build(tenant=tenant, subject_id=subject_id, draft=draft)
            if replaces is not None:
                # A restatement of the same fact: the new wording stands for it over the
                # whole time it has held, and the old one is valid at no time of its own.
                memory.valid_from = min(memory.valid_from, replaces.valid_from)
                memory.supersedes = [replaces.pk]
                memory.supersede_reason = SupersedeReason.PARAPHRASE
            memory_insert(
                tenant=tenant, subject_id=subject_id, memories=[memory], detect_changes=False
            )
            outcome.promoted += 1
            outcome.memory_ids.append(str(memory.pk))
            if replaces is not None:
                memory_retire(
                    tenant=tenant,
                    subject_id=subject_id,
                    old=replaces,
                    new=memory,
                    reason=SupersedeReason.PARAPHRASE,
                    now=memory.embedded_at or timezone.now(),
                )
                outcome.superseded += 1
                history_room -= 1
            else:
                room -= 1
            # A new value of something the subject held (a job, a city) retires or flags it;
            # an explicit memory is never retired by a promoted one.
            if changes is None:
                changed = memory_detect_changes(
                    tenant=tenant, subject_id=subject_id, memories=[memory]
                )
            else:
                said = changes.get(index, StatementChanges())
                changed = memory_apply_change_decisions(
                    tenant=tenant,
                    subject_id=subject_id,
                    new=memory,
                    updates=said.updates,
                    contradicts=said.contradicts,
                )
            outcome.changed += len(changed.superseded)
            outcome.conflicts += len(changed.flagged)
            room += len(changed.superseded)  # each retired row left the live count
    _emit_outcome(tenant=tenant, outcome=outcome)
    return outcome


# ----------------------------------------------------------------------------- worker


def confidence_gate(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Drop candidates below the threshold; keep the most confident up to the cap."""
    survivors = [c for c in candidates if c.confidence >= settings.PROMOTION_CONFIDENCE_THRESHOLD]
    survivors.sort(key=lambda c: -c.confidence)
    return survivors[: settings.PROMOTION_MAX_CANDIDATES]


def promotion_run(*, job_id: uuid.UUID | str) -> str:
    """Run one reserved job (the Celery task body). Returns the job's final status.

    Idempotent: only a ``queued`` job is claimed (under a lease), so a redelivered message is
    a no-op. An unexpected error fails the job with its reason, which frees the session for a
    later trigger; a worker that dies leaves the lease to expire and the reaper to act.
    """
    job = job_claim(job_id=job_id)
    if job is None:
        status = PromotionJob.objects.filter(pk=job_id).values_list("status", flat=True).first()
        return status or "missing"
    try:
        return _run_claimed(job)
    except PromotionSnoozed:
        raise
    except Exception as exc:
        logger.exception("promotion job %s failed", job.pk)
        job_fail(job_id=job.pk, reason=UNEXPECTED_ERROR, detail=type(exc).__name__)
        return PromotionJobStatus.FAILED


def _run_claimed(job: PromotionJob) -> str:
    tenant, subject_id, session_id = job.tenant, job.subject_id, job.session_id
    if tenant.is_halted:
        # A custody halt freezes the tenant's data; the sweep offers the session again after
        # the halt is lifted (its watermark is untouched).
        job_finish(job, PromotionJobStatus.DROPPED, {"reason": TENANT_HALTED})
        return PromotionJobStatus.DROPPED
    metadata = {"tenant_id": str(tenant.pk), "session_id": session_id, "trigger": job.trigger}

    # Worker-level re-check: a burst that slipped past the reservation becomes a cheap no-op.
    if _budget_spent(tenant=tenant, subject_id=subject_id, now=job.created_at, before=job):
        job_finish(job, PromotionJobStatus.DROPPED, {"reason": "budget_exceeded"})
        emit("memory_promotion.skipped", {"count": 1}, {**metadata, "reason": "budget_exceeded"})
        return PromotionJobStatus.DROPPED

    rows = _session_turns(tenant=tenant, subject_id=subject_id, session_id=session_id)
    fingerprint = session_fingerprint([(row.role, row.content) for row in rows])
    if len(rows) < 2 or fingerprint == _watermark(
        tenant=tenant, subject_id=subject_id, session_id=session_id
    ):
        reason = "too_few_turns" if len(rows) < 2 else "unchanged"
        job_finish(job, PromotionJobStatus.SKIPPED, {"reason": reason})
        emit("memory_promotion.skipped", {"count": 1}, {**metadata, "reason": reason})
        return PromotionJobStatus.SKIPPED

    turns = turn_window(
        [
            Turn(role=row.role, content=row.content, seq=row.seq, occurred_at=row.occurred_at)
            for row in rows
            if not is_recalled_context(row.metadata)
        ]
    )
    llm = tenant_llm_config(tenant=tenant)
    started = time.perf_counter()
    try:
        candidates = compile_turns(turns, llm=llm)
    except CompileFailed as exc:
        job_finish(job, PromotionJobStatus.FAILED, {"reason": exc.reason})
        emit("memory_promotion.failed", {"count": 1}, {**metadata, "reason": exc.reason})
        return PromotionJobStatus.FAILED
    compile_ms = round((time.perf_counter() - started) * 1000, 2)
    survivors = promotion_with_referents(
        tenant=tenant, subject_id=subject_id, candidates=confidence_gate(candidates)
    )
    emit(
        "memory_promotion.compiled",
        {"candidates": len(candidates), "survivors": len(survivors)},
        metadata,
    )
    changes = promotion_change_decisions(
        tenant=tenant, subject_id=subject_id, candidates=survivors, llm=llm
    )
    try:
        outcome = promotion_persist(
            tenant=tenant,
            subject_id=subject_id,
            session_id=session_id,
            candidates=survivors,
            compiler=compiler_name(llm),
            changes=changes,
        )
    except PromotionSnoozed:
        # Put the job back so the retry claims it again; the watermark is untouched.
        job_release(job)
        raise
    except PromotionHalted:
        job_finish(job, PromotionJobStatus.DROPPED, {"reason": TENANT_HALTED})
        return PromotionJobStatus.DROPPED
    SessionPromotion.objects.update_or_create(
        tenant=tenant,
        subject_id=subject_id,
        session_id=session_id,
        defaults={"content_hash": fingerprint},
    )
    SessionPromotion.objects.filter(
        tenant=tenant, subject_id=subject_id, session_id=session_id
    ).update(promoted_count=F("promoted_count") + outcome.promoted)
    result = {k: v for k, v in asdict(outcome).items() if k != "memory_ids"}
    job_finish(
        job,
        PromotionJobStatus.COMPLETED,
        {**result, "candidates": len(candidates), "compile_ms": compile_ms},
    )
    return PromotionJobStatus.COMPLETED


def assert_promotion_ttl_invariant() -> None:
    """sweep_interval < sweep_window < session TTL, or no session can be promoted reliably."""
    interval = settings.PROMOTION_SWEEP_INTERVAL_SECONDS
    window = settings.PROMOTION_SWEEP_WINDOW_SECONDS
    ttl = settings.SESSION_DEFAULT_TTL_SECONDS
    if not interval < window < ttl:
        raise ImproperlyConfigured(
            "Promotion TTL-window invariant violated: need PROMOTION_SWEEP_INTERVAL_SECONDS "
            f"({interval}) < PROMOTION_SWEEP_WINDOW_SECONDS ({window}) < "
            f"SESSION_DEFAULT_TTL_SECONDS ({ttl})."
        )
