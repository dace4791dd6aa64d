"""Fill in long-term memory embeddings: a per-tenant drain woken after commit, and the beat
backfill as its safety net.

A write commits its rows with ``embedding`` NULL and, after commit, *wakes* its tenant's drain
(:func:`memory_wake_embeddings`): an upsert of the tenant's :class:`EmbeddingWake` marker that
enqueues one ``memory.drain_embeddings`` task only if no drain is already due, so a burst of
writes costs a handful of tasks, not one per write. The task starts
``MEMORY_EMBEDDING_WAKE_DELAY_SECONDS`` after the wake, so a stream of single writes is embedded
in batches too, rather than one provider call (and one task) per write. The drain
(:func:`memory_drain_embeddings`) removes the marker, then claims the tenant's pending rows
``EMBEDDING_BATCH_SIZE`` at a time (``FOR UPDATE SKIP LOCKED``: two drains, or a drain and the
backfill, never claim the same row), embeds each batch in one provider call, writes the vectors
and commits, until no row is left or its budget (``MEMORY_EMBEDDING_DRAIN_MAX_BATCHES``) is
spent, when it wakes a successor. Removing the marker before the first claim is what makes a
skipped wake safe: a row committed before the removal is seen by the claim, and one committed
after it wakes a new drain.

A provider outage stops the tenant's drain at the first failed call and snoozes it (the task
retries in ``EMBEDDING_RETRY_COUNTDOWN_SECONDS``, and the marker holds wakes back meanwhile);
the breaker counts the error against the provider configuration as any call does. Rows whose
calls failed go after every row that never failed and are embedded one per call, so a text the
provider refuses holds up neither newer rows nor its batch; past
``MEMORY_EMBEDDING_MAX_FAILURES`` only the backfill retries them. Until embedded, a row is
``pending`` and found by keyword recall only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from apps.core.db.cursors import server_bound_cursor
from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import write_transaction
from apps.core.embedding_models import oldest_of_other_models
from apps.core.embedding_writes import store_vectors
from apps.core.telemetry import emit
from apps.memory.models import EmbeddingWake, Memory
from apps.memory.queue import DRAIN_EMBEDDINGS
from apps.providers.embeddings import EmbeddingConfig, EmbeddingsUnavailable, embed_texts
from apps.providers.exceptions import ProvidersErrorCode
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

BACKFILL_MAX_ROWS_PER_RUN = 2_000


@dataclass
class EmbeddingRun:
    embedded: int = 0
    #: Provider calls made (one per batch).
    calls: int = 0
    # tenant id → reason, for tenants whose provider was unavailable (their rows stay NULL
    # and are retried; nothing is lost).
    unavailable: dict[str, str] = field(default_factory=dict)
    #: The drain spent its budget with rows possibly left (a successor was woken).
    more: bool = False


# The marker is written with the database's clock, so web processes and workers agree on it.
_WAKE_SQL = f"""
    INSERT INTO {EmbeddingWake._meta.db_table} AS wake
           (tenant_id, due_until, created_at, updated_at)
    VALUES (%s, clock_timestamp() + make_interval(secs => %s), clock_timestamp(),
            clock_timestamp())
    ON CONFLICT (tenant_id) DO UPDATE
       SET due_until = EXCLUDED.due_until, updated_at = EXCLUDED.updated_at
     WHERE wake.due_until < clock_timestamp()
    RETURNING wake.tenant_id
"""  # noqa: S608 - the table name comes from the model


def memory_wake_embeddings(*, tenant_id: uuid.UUID | str) -> bool:
    """Make sure a drain of the tenant's pending rows is queued; ``True`` if this call queued
    it, ``False`` if one already was (the common case in a burst: one upsert, no task)."""
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(_WAKE_SQL, [str(tenant_id), settings.MEMORY_EMBEDDING_WAKE_TTL_SECONDS])
        claimed = cursor.fetchone() is not None
    if not claimed:
        return False
    try:
        DRAIN_EMBEDDINGS.apply_async(
            args=[str(tenant_id)], countdown=settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS or None
        )
    except Exception:
        # The broker refused the task: drop the marker so the next write wakes again.
        EmbeddingWake.objects.using(PRIMARY).filter(tenant_id=tenant_id).delete()
        raise
    return True


def _hold_wakes(*, tenant_id: uuid.UUID | str, seconds: int) -> None:
    """The drain is snoozed: wakes are no-ops until its retry is due (and the usual TTL)."""
    EmbeddingWake.objects.using(PRIMARY).update_or_create(
        tenant_id=tenant_id,
        defaults={"due_until": timezone.now() + timedelta(seconds=seconds)},
    )


def _store_vectors(
    *, ids: Sequence[str], vectors: Sequence[Sequence[float]], config: EmbeddingConfig
) -> int:
    """One UPDATE for the whole batch, stamped with ``config``'s model; only rows still
    unembedded are written, so a row embedded meanwhile by another path
    (``memory_embed_pending``) is neither counted nor overwritten."""
    return store_vectors(
        table=Memory._meta.db_table,
        ids=ids,
        vectors=vectors,
        model=config.fingerprint,
        only_unembedded=True,
    )


def _groups(rows: Sequence[Memory]) -> list[list[Memory]]:
    """One provider call for the rows that never failed; one each for those that did."""
    fresh = [row for row in rows if row.embedding_failures == 0]
    return ([fresh] if fresh else []) + [[row] for row in rows if row.embedding_failures]


def _claim(*, tenant_id: uuid.UUID, limit: int, include_failed: bool) -> list[Memory]:
    """Lock up to ``limit`` of the tenant's pending rows no other drain holds (call inside a
    transaction on the primary): never-failed rows first, oldest first."""
    pending = Memory.objects.using(PRIMARY).filter(tenant_id=tenant_id, embedding__isnull=True)
    if not include_failed:
        pending = pending.filter(embedding_failures__lt=settings.MEMORY_EMBEDDING_MAX_FAILURES)
    return list(
        pending.select_for_update(skip_locked=True)
        .order_by("embedding_failures", "created_at", "id")
        .only("pk", "text", "embedding_failures")[:limit]
    )


def _drain_tenant(
    *, tenant: Tenant, max_rows: int, run: EmbeddingRun, include_failed: bool = False
) -> bool:
    """Embed the tenant's pending rows, batch by batch, up to ``max_rows``. Returns whether
    rows may be left (budget spent with a full last batch)."""
    config: EmbeddingConfig = tenant_embedding_config(tenant=tenant)
    batch_size = max(1, settings.EMBEDDING_BATCH_SIZE)
    claimed = 0
    while claimed < max_rows:
        limit = min(batch_size, max_rows - claimed)
        with write_transaction():
            rows = _claim(tenant_id=tenant.pk, limit=limit, include_failed=include_failed)
            claimed += len(rows)
            for group in _groups(rows):
                if not _embed_group(tenant=tenant, config=config, group=group, run=run):
                    return True
        if len(rows) < limit:
            return False
    return True


def _embed_group(
    *, tenant: Tenant, config: EmbeddingConfig, group: Sequence[Memory], run: EmbeddingRun
) -> bool:
    """Embed and store one group; ``False`` when the tenant's drain must stop (outage)."""
    run.calls += 1
    try:
        vectors = embed_texts(config, [row.text for row in group])
    except EmbeddingsUnavailable as exc:
        if exc.reason != ProvidersErrorCode.CIRCUIT_OPEN:
            # The call reached the provider and failed: these rows go to the back, one per call.
            Memory.objects.using(PRIMARY).filter(pk__in=[row.pk for row in group]).update(
                embedding_failures=F("embedding_failures") + 1
            )
        emit(
            "memory_embedding.unavailable",
            {"count": len(group)},
            {"tenant_id": str(tenant.pk), "reason": exc.reason},
        )
        # A row that failed before and fails again alone is the row's problem, not an outage
        # (an outage opens the breaker, and the next call stops the drain).
        lone_repeat = len(group) == 1 and group[0].embedding_failures > 0
        if lone_repeat and exc.reason != ProvidersErrorCode.CIRCUIT_OPEN:
            return True
        run.unavailable[str(tenant.pk)] = exc.reason
        return False
    run.embedded += _store_vectors(
        ids=[str(row.pk) for row in group], vectors=vectors, config=config
    )
    return True


def memory_drain_embeddings(
    *, tenant_id: uuid.UUID | str, max_batches: int | None = None
) -> EmbeddingRun:
    """Embed the tenant's pending rows (what a wake-up's task runs; see the module docstring)."""
    run = EmbeddingRun()
    # Before the first claim: a row committed from here on wakes a new drain.
    EmbeddingWake.objects.using(PRIMARY).filter(tenant_id=tenant_id).delete()
    tenant = Tenant.objects.using(PRIMARY).filter(pk=tenant_id).first()
    if tenant is None:
        return run
    batches = settings.MEMORY_EMBEDDING_DRAIN_MAX_BATCHES if max_batches is None else max_batches
    run.more = _drain_tenant(
        tenant=tenant, max_rows=max(1, batches) * max(1, settings.EMBEDDING_BATCH_SIZE), run=run
    )
    if run.unavailable:
        run.more = False
        _hold_wakes(
            tenant_id=tenant.pk,
            seconds=settings.EMBEDDING_RETRY_COUNTDOWN_SECONDS
            + settings.MEMORY_EMBEDDING_WAKE_TTL_SECONDS,
        )
    elif run.more:
        memory_wake_embeddings(tenant_id=tenant.pk)
    if run.embedded:
        emit("memory_embedding.embedded", {"count": run.embedded, "calls": run.calls})
    return run


def memory_embed_pending(*, memory_ids: Sequence[str]) -> EmbeddingRun:
    """Embed the given memories that are still pending, now (idempotent): for callers that
    need the vectors before they go on (imports, the evaluation harnesses, tests)."""
    run = EmbeddingRun()
    rows = list(
        Memory.objects.using(PRIMARY)
        .select_related("tenant")
        .filter(pk__in=list(memory_ids), embedding__isnull=True)
        .only("pk", "text", "tenant")
        .order_by("created_at")
    )
    by_tenant: dict[str, list[Memory]] = {}
    for row in rows:
        by_tenant.setdefault(str(row.tenant_id), []).append(row)
    batch_size = max(1, settings.EMBEDDING_BATCH_SIZE)
    for tenant_rows in by_tenant.values():
        tenant = tenant_rows[0].tenant
        config = tenant_embedding_config(tenant=tenant)
        for start in range(0, len(tenant_rows), batch_size):
            batch = tenant_rows[start : start + batch_size]
            try:
                vectors = embed_texts(config, [row.text for row in batch])
            except EmbeddingsUnavailable as exc:
                run.unavailable[str(tenant.pk)] = exc.reason
                emit(
                    "memory_embedding.unavailable",
                    {"count": len(tenant_rows) - start},
                    {"tenant_id": str(tenant.pk), "reason": exc.reason},
                )
                break
            run.calls += 1
            run.embedded += _store_vectors(
                ids=[str(row.pk) for row in batch], vectors=vectors, config=config
            )
    if run.embedded:
        emit("memory_embedding.embedded", {"count": run.embedded, "calls": run.calls})
    return run


def memory_embed_now(*, memories: Sequence[Memory]) -> EmbeddingRun:
    """Embed memories that were just written, before their write answers (``embed_now``), so
    semantic recall finds them at once, as keyword recall already does. The instances are
    updated in place (``embedded_at``), so the write's answer says ``ready``. A provider that
    is unavailable leaves them ``pending`` for the drain to retry: the write itself stands."""
    run = memory_embed_pending(memory_ids=[str(memory.pk) for memory in memories])
    if run.embedded:
        embedded = dict(
            Memory.objects.using(PRIMARY)
            .filter(pk__in=[memory.pk for memory in memories], embedded_at__isnull=False)
            .values_list("pk", "embedded_at")
        )
        for memory in memories:
            memory.embedded_at = embedded.get(memory.pk, memory.embedded_at)
    return run


def memory_backfill_embeddings(*, max_rows: int = BACKFILL_MAX_ROWS_PER_RUN) -> EmbeddingRun:
    """Embed rows no drain reached (a lost wake, a snooze that spent its retries, rows past
    ``MEMORY_EMBEDDING_MAX_FAILURES``), fair across tenants: each tenant with pending rows gets
    an equal share of ``max_rows`` (at least one batch), so neither a tenant whose provider is
    down nor one with a large backlog starves the others."""
    run = EmbeddingRun()
    tenant_ids = list(
        Memory.objects.using(PRIMARY)
        .filter(embedding__isnull=True)
        .order_by("tenant_id")
        .values_list("tenant_id", flat=True)
        .distinct()
    )
    if not tenant_ids:
        return run
    share = max(settings.EMBEDDING_BATCH_SIZE, max_rows // len(tenant_ids))
    for tenant in Tenant.objects.using(PRIMARY).filter(pk__in=tenant_ids).order_by("pk"):
        _drain_tenant(tenant=tenant, max_rows=share, run=run, include_failed=True)
    if run.embedded:
        emit("memory_embedding.embedded", {"count": run.embedded, "calls": run.calls})
    return run


@dataclass(frozen=True)
class MigrationBatch:
    """One batch of the background model migration: rows read, rows re-embedded."""

    fetched: int
    stored: int


def memory_migrate_batch(*, tenant: Tenant, config: EmbeddingConfig, limit: int) -> MigrationBatch:
    """Re-embed with ``config`` the tenant's ``limit`` oldest rows whose vector another model
    made (superseded rows too: recall with ``include_superseded`` ranks them), and stamp them
    with its model — one batch of the background migration
    (:func:`apps.dataops.services.embeddings_migrate`).

    Reads one index range per stale model (the model index, memory 0036), so a batch costs
    the same at any table size; the oldest across them are taken. Raises
    ``EmbeddingsUnavailable`` with nothing written.
    """
    model = config.fingerprint
    rows = oldest_of_other_models(
        Memory, tenant_id=tenant.pk, model=model, fields=["text"], limit=limit, using=PRIMARY
    )
    if not rows:
        return MigrationBatch(fetched=0, stored=0)
    vectors = embed_texts(config, [row.text for row in rows])
    # Overwrites the old model's vector, in this tenant only. The text of a memory never
    # changes, so the vector is the row's whatever happened meanwhile; a row forgotten
    # meanwhile is simply not there to write.
    stored = store_vectors(
        table=Memory._meta.db_table,
        ids=[str(row.pk) for row in rows],
        vectors=vectors,
        model=model,
        only_unembedded=False,
        tenant_id=tenant.pk,
    )
    return MigrationBatch(fetched=len(rows), stored=stored)
