"""Re-embed a tenant's rows with its current provider (``reembed``), resumably.

A run is a :class:`ReembedRun` row: the tenant, the provider fingerprint and ``started_at``.
A row is still to do while its vector is missing or was stored before ``started_at``; each
batch is embedded, then written (vectors, ``embedded_at = now`` and the run's counters) in
its own short transaction, walking rows oldest first by ``(created_at, id)``. So when the
provider fails half-way, everything written stays written, the run stays open, and the next
``reembed`` for the same provider resumes it: the rows already done now carry an
``embedded_at`` after ``started_at`` and are not sent again. A run for a different provider
closes the open one and starts over. Rows written meanwhile by the API are embedded by the
on-commit task with the (already current) provider, so they never need the run.

Memories: every row, superseded ones included (recall with ``include_superseded`` ranks
them by the same vectors). Articles: every non-archived one, via the knowledge app's
``article_reembed_batch``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, IntegrityError, connections
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import savepoint, write_transaction
from apps.core.embedding_writes import store_vectors
from apps.core.telemetry import emit
from apps.dataops.exceptions import ReembedAlreadyRunning, ReembedInterrupted
from apps.dataops.models import ReembedRun
from apps.knowledge.services import article_reembed_batch, article_reembed_remaining
from apps.memory.models import Memory
from apps.providers.embeddings import EmbeddingConfig, EmbeddingsUnavailable, embed_texts
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

CLOSED_BY_OTHER_PROVIDER = "closed: a run for another provider started"


@dataclass(frozen=True)
class ReembedResult:
    run_id: uuid.UUID | None  # None for --only-pending, which needs no marker
    provider: str
    resumed: bool
    started_at: datetime | None
    memories: int
    articles: int


def provider_fingerprint(config: EmbeddingConfig) -> str:
    """Endpoint, model and dimensions — what makes two vectors comparable. Never the key."""
    dimensions = f"|{config.dimensions}" if config.dimensions else ""
    return f"{config.endpoint_key}{dimensions}"


def _memory_candidates(*, tenant: Tenant, embedded_before: datetime | None) -> QuerySet[Memory]:
    stale = Q(embedding__isnull=True)
    if embedded_before is not None:
        stale |= Q(embedded_at__isnull=True) | Q(embedded_at__lt=embedded_before)
    return Memory.objects.filter(tenant=tenant).filter(stale)


def _store_memory_vectors(
    *, tenant: Tenant, rows: list[Memory], vectors: list[list[float]], model: str
) -> int:
    # Overwrites whatever vector the row has (that is the point of a reembed), in this tenant.
    return store_vectors(
        table=Memory._meta.db_table,
        ids=[str(row.pk) for row in rows],
        vectors=vectors,
        model=model,
        tenant_id=tenant.pk,
        only_unembedded=False,
    )


def _open_run(*, tenant: Tenant, provider: str) -> tuple[ReembedRun, bool]:
    """The tenant's open run for ``provider`` (resumed), else a new one."""
    with write_transaction():
        current = (
            ReembedRun.objects.select_for_update()
            .filter(tenant=tenant, finished_at__isnull=True)
            .first()
        )
        if current is not None and current.provider == provider:
            return current, True
        now = timezone.now()
        if current is not None:
            ReembedRun.objects.filter(pk=current.pk).update(
                finished_at=now, last_error=CLOSED_BY_OTHER_PROVIDER
            )
        run = ReembedRun(tenant=tenant, provider=provider, started_at=now)
        run.full_clean(exclude=["tenant"], validate_constraints=False)
        try:
            with savepoint():
                run.save(force_insert=True)
        except IntegrityError as exc:
            raise ReembedAlreadyRunning(
                "Another reembed of this tenant just started; let it finish."
            ) from exc
        return run, False


class TenantReembedLock:
    """A session-level advisory lock: one ``reembed`` (or background migration run) per
    tenant at a time. Raises ``ReembedAlreadyRunning`` at once when another holds it."""

    def __init__(self, tenant: Tenant) -> None:
        self.key = f"reembed:{tenant.pk}"

    def __enter__(self) -> None:
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [self.key])
            if not cursor.fetchone()[0]:
                raise ReembedAlreadyRunning("Another reembed of this tenant is running.")

    def __exit__(self, *exc_info: object) -> None:
        try:
            with connections[PRIMARY].cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [self.key])
        except DatabaseError:
            # The connection is broken or its transaction aborted: the original error is the
            # one to report, and Postgres drops the lock with the session anyway.
            if exc_info[0] is None:
                raise


def memory_reembed(
    *,
    tenant: Tenant,
    batch_size: int,
    only_pending: bool = False,
    on_total: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> ReembedResult:
    """Re-embed the tenant's memories and articles with its current provider.

    ``only_pending`` embeds just the rows without a vector (no run marker: that set shrinks
    by itself). Otherwise see the module docstring. Raises :class:`ReembedInterrupted`
    (503 ``embeddings_unavailable``) when the provider fails, after recording the error on
    the run; :class:`ReembedAlreadyRunning` when another reembed holds the tenant.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    config = tenant_embedding_config(tenant=tenant)
    provider = provider_fingerprint(config)
    with TenantReembedLock(tenant):
        run: ReembedRun | None = None
        resumed = False
        embedded_before: datetime | None = None
        if not only_pending:
            run, resumed = _open_run(tenant=tenant, provider=provider)
            embedded_before = run.started_at
        if on_total is not None:
            on_total(
                _memory_candidates(tenant=tenant, embedded_before=embedded_before).count()
                + article_reembed_remaining(tenant=tenant, embedded_before=embedded_before)
            )
        job = _ReembedJob(
            tenant=tenant,
            config=config,
            run=run,
            embedded_before=embedded_before,
            batch_size=batch_size,
            on_progress=on_progress,
        )
        try:
            _reembed_memories(job)
            _reembed_articles(job)
        except EmbeddingsUnavailable as exc:
            if run is not None:
                ReembedRun.objects.filter(pk=run.pk).update(
                    last_error=f"{exc.reason}: {exc.message}"[:500]
                )
            emit(
                "memory_reembed.interrupted",
                {"count": 1},
                {"tenant_id": str(tenant.pk), "reason": exc.reason},
            )
            raise ReembedInterrupted(
                f"{exc.message} This run re-embedded {job.memories} memories and "
                f"{job.articles} articles before it stopped; run the same command again to "
                "continue where it left off.",
                details={
                    "reason": exc.reason,
                    "memories": job.memories,
                    "articles": job.articles,
                },
            ) from exc
        if run is not None:
            ReembedRun.objects.filter(pk=run.pk).update(finished_at=timezone.now(), last_error="")
    emit(
        "memory_reembed.finished",
        {"memories": job.memories, "articles": job.articles},
        {"tenant_id": str(tenant.pk), "resumed": resumed},
    )
    return ReembedResult(
        run_id=run.pk if run is not None else None,
        provider=provider,
        resumed=resumed,
        started_at=run.started_at if run is not None else None,
        memories=job.memories,
        articles=job.articles,
    )


@dataclass
class _ReembedJob:
    """One re-embed of a tenant: what its memory and article passes read, and the rows each
    has re-embedded so far."""

    tenant: Tenant
    config: EmbeddingConfig
    run: ReembedRun | None
    embedded_before: datetime | None
    batch_size: int
    on_progress: Callable[[int], None] | None
    memories: int = 0
    articles: int = 0

    def progressed(self, rows: int) -> None:
        if self.on_progress is not None:
            self.on_progress(rows)


def _reembed_memories(job: _ReembedJob) -> None:
    # Keyset pagination: one pass over the candidates, each row visited at most once even if
    # its write is skipped (e.g. forgotten meanwhile).
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        rows = _memory_candidates(tenant=job.tenant, embedded_before=job.embedded_before)
        if after is not None:
            rows = rows.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], id__gt=after[1]))
        batch = list(
            rows.order_by("created_at", "id").only("pk", "text", "created_at")[: job.batch_size]
        )
        if not batch:
            return
        # Raises EmbeddingsUnavailable; nothing of this batch is written then.
        vectors = embed_texts(job.config, [row.text for row in batch])
        with write_transaction():
            stored = _store_memory_vectors(
                tenant=job.tenant, rows=batch, vectors=vectors, model=job.config.fingerprint
            )
            if job.run is not None:
                ReembedRun.objects.filter(pk=job.run.pk).update(
                    memories_embedded=F("memories_embedded") + stored
                )
        job.memories += stored
        after = (batch[-1].created_at, batch[-1].pk)
        job.progressed(len(batch))


def _reembed_articles(job: _ReembedJob) -> None:
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        # Embeds, then writes in one statement; raises EmbeddingsUnavailable before writing.
        batch = article_reembed_batch(
            tenant=job.tenant,
            config=job.config,
            embedded_before=job.embedded_before,
            after=after,
            batch_size=job.batch_size,
        )
        if not batch.fetched:
            return
        if job.run is not None and batch.stored:
            # Informational: correctness rests on embedded_at, not on this counter.
            ReembedRun.objects.filter(pk=job.run.pk).update(
                articles_embedded=F("articles_embedded") + batch.stored
            )
        job.articles += batch.stored
        after = batch.cursor
        job.progressed(batch.fetched)
