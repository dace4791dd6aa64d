"""Fill in long-term memory embeddings: on commit (batched task) and by the beat backfill."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.embedding_writes import store_vectors
from apps.core.telemetry import emit
from apps.memory.models import Memory
from apps.providers.embeddings import EmbeddingsUnavailable, embed_texts
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

BACKFILL_MAX_ROWS_PER_RUN = 2_000


@dataclass
class EmbeddingRun:
    embedded: int = 0
    # tenant id → reason, for tenants whose provider was unavailable (their rows stay NULL
    # and are retried; nothing is lost).
    unavailable: dict[str, str] = field(default_factory=dict)


def _embed_for_tenant(*, tenant: Tenant, rows: Sequence[Memory], run: EmbeddingRun) -> None:
    config = tenant_embedding_config(tenant=tenant)
    batch_size = settings.EMBEDDING_BATCH_SIZE
    for start in range(0, len(rows), batch_size):
        batch = list(rows[start : start + batch_size])
        try:
            vectors = embed_texts(config, [row.text for row in batch])
        except EmbeddingsUnavailable as exc:
            run.unavailable[str(tenant.pk)] = exc.reason
            emit(
                "memory_embedding.unavailable",
                {"count": len(rows) - start},
                {"tenant_id": str(tenant.pk), "reason": exc.reason},
            )
            return
        run.embedded += _store_vectors(ids=[str(row.pk) for row in batch], vectors=vectors)


def _store_vectors(*, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> int:
    """One UPDATE for the whole batch; only rows still unembedded are written, so two
    concurrent runs (task + backfill) cannot both count or overwrite a row."""
    return store_vectors(
        table=Memory._meta.db_table, ids=ids, vectors=vectors, only_unembedded=True
    )


def memory_embed_pending(*, memory_ids: Sequence[str]) -> EmbeddingRun:
    """Embed the given memories that are still pending (idempotent)."""
    run = EmbeddingRun()
    rows = list(
        Memory.objects.select_related("tenant")
        .filter(pk__in=list(memory_ids), embedding__isnull=True)
        .only("pk", "text", "tenant")
        .order_by("created_at")
    )
    by_tenant: dict[str, list[Memory]] = defaultdict(list)
    tenants: dict[str, Tenant] = {}
    for row in rows:
        by_tenant[str(row.tenant_id)].append(row)
        tenants[str(row.tenant_id)] = row.tenant
    for tenant_id, tenant_rows in by_tenant.items():
        _embed_for_tenant(tenant=tenants[tenant_id], rows=tenant_rows, run=run)
    if run.embedded:
        emit("memory_embedding.embedded", {"count": run.embedded})
    return run


def memory_backfill_embeddings(*, max_rows: int = BACKFILL_MAX_ROWS_PER_RUN) -> EmbeddingRun:
    """Embed rows whose on-commit task never ran or gave up (oldest first, bounded)."""
    ids = list(
        Memory.objects.filter(embedding__isnull=True)
        .order_by("created_at")
        .values_list("pk", flat=True)[:max_rows]
    )
    return memory_embed_pending(memory_ids=[str(pk) for pk in ids])
