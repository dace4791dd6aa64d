"""Fill in article embeddings: on commit (batched task) and by the beat backfill.

Articles proposed through the novelty gate are embedded synchronously (the gate needs the
vector anyway); articles written or edited through the API are stored with ``embedding``
NULL and embedded here. ``article_reembed_batch`` overwrites vectors with a tenant's current
provider (the ``reembed`` command).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q, QuerySet

from apps.core.db.on_commit import enqueue_on_commit
from apps.core.db.routers import PRIMARY
from apps.core.embedding_models import oldest_of_other_models
from apps.core.embedding_writes import store_vectors
from apps.core.telemetry import emit
from apps.knowledge.models import Article, ArticleStatus
from apps.knowledge.queue import EMBED_ARTICLES
from apps.knowledge.services.fields import article_embedding_text
from apps.providers.embeddings import EmbeddingConfig, EmbeddingsUnavailable, embed_texts
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

BACKFILL_MAX_ROWS_PER_RUN = 1_000


@dataclass
class ArticleEmbeddingRun:
    embedded: int = 0
    # tenant id → reason, for tenants whose provider was unavailable (their rows stay NULL
    # and are retried; nothing is lost).
    unavailable: dict[str, str] = field(default_factory=dict)


def enqueue_article_embedding(article_ids: Sequence[object]) -> None:
    """Embed these articles once the current transaction commits (never before: the task
    could otherwise run on another worker before the rows are visible)."""
    ids = [str(article_id) for article_id in article_ids]
    batch = settings.EMBEDDING_BATCH_SIZE
    for start in range(0, len(ids), batch):
        # With the broker down, the backfill embeds them later.
        enqueue_on_commit(EMBED_ARTICLES, ids[start : start + batch])


def _store_vectors(
    *, rows: Sequence[Article], vectors: Sequence[Sequence[float]], config: EmbeddingConfig
) -> int:
    """One UPDATE for the batch. Only rows still unembedded AND still at the version that was
    embedded are written: an edit made while the provider was working cleared the vector and
    bumped the version, so its stale vector is discarded and the edit's own task fills it."""
    return store_vectors(
        table=Article._meta.db_table,
        ids=[str(row.pk) for row in rows],
        vectors=vectors,
        model=config.fingerprint,
        versions=[row.version for row in rows],
        only_unembedded=True,
    )


def _embed_for_tenant(*, tenant: Tenant, rows: Sequence[Article], run: ArticleEmbeddingRun) -> None:
    config = tenant_embedding_config(tenant=tenant)
    batch_size = settings.EMBEDDING_BATCH_SIZE
    for start in range(0, len(rows), batch_size):
        batch = list(rows[start : start + batch_size])
        texts = [article_embedding_text(title=row.title, body=row.body) for row in batch]
        try:
            vectors = embed_texts(config, texts)
        except EmbeddingsUnavailable as exc:
            run.unavailable[str(tenant.pk)] = exc.reason
            emit(
                "knowledge_embedding.unavailable",
                {"count": len(rows) - start},
                {"tenant_id": str(tenant.pk), "reason": exc.reason},
            )
            return
        run.embedded += _store_vectors(rows=batch, vectors=vectors, config=config)


def article_embed_pending(*, article_ids: Sequence[str]) -> ArticleEmbeddingRun:
    """Embed those of ``article_ids`` that are still pending (idempotent)."""
    run = ArticleEmbeddingRun()
    rows = list(
        Article.objects.select_related("tenant")
        .filter(pk__in=list(article_ids), embedding__isnull=True)
        .exclude(status=ArticleStatus.ARCHIVED)
        .only("pk", "title", "body", "version", "tenant")
        .order_by("created_at", "id")
    )
    by_tenant: dict[str, list[Article]] = defaultdict(list)
    tenants: dict[str, Tenant] = {}
    for row in rows:
        by_tenant[str(row.tenant_id)].append(row)
        tenants[str(row.tenant_id)] = row.tenant
    for tenant_id, tenant_rows in by_tenant.items():
        _embed_for_tenant(tenant=tenants[tenant_id], rows=tenant_rows, run=run)
    if run.embedded:
        emit("knowledge_embedding.embedded", {"count": run.embedded})
    return run


def article_backfill_embeddings(
    *, max_rows: int = BACKFILL_MAX_ROWS_PER_RUN
) -> ArticleEmbeddingRun:
    """Embed articles whose on-commit task never ran or gave up (oldest first, bounded)."""
    ids = list(
        Article.objects.filter(embedding__isnull=True)
        .exclude(status=ArticleStatus.ARCHIVED)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:max_rows]
    )
    return article_embed_pending(article_ids=[str(pk) for pk in ids])


# ----------------------------------------------------------------------------- re-embedding


@dataclass(frozen=True)
class ArticleReembedBatch:
    fetched: int
    stored: int
    #: (created_at, id) of the last article fetched: pass it as ``after`` for the next batch.
    cursor: tuple[datetime, uuid.UUID] | None


def _reembed_candidates(*, tenant: Tenant, embedded_before: datetime | None) -> QuerySet[Article]:
    """Non-archived articles still to (re-)embed: without a vector, or — given
    ``embedded_before`` — embedded before it."""
    stale = Q(embedding__isnull=True)
    if embedded_before is not None:
        stale |= Q(embedded_at__isnull=True) | Q(embedded_at__lt=embedded_before)
    return (
        Article.objects.filter(tenant=tenant).exclude(status=ArticleStatus.ARCHIVED).filter(stale)
    )


def article_reembed_remaining(*, tenant: Tenant, embedded_before: datetime | None) -> int:
    """How many articles :func:`article_reembed_batch` would still visit (for progress)."""
    return int(_reembed_candidates(tenant=tenant, embedded_before=embedded_before).count())


def article_reembed_batch(
    *,
    tenant: Tenant,
    config: EmbeddingConfig,
    embedded_before: datetime | None,
    after: tuple[datetime, uuid.UUID] | None,
    batch_size: int,
) -> ArticleReembedBatch:
    """Re-embed the next ``batch_size`` candidates (oldest first, strictly after ``after``)
    with ``config`` and overwrite their vectors — ``reembed``'s article half.

    Only an article still at the version that was embedded is written (an edit made
    meanwhile cleared the vector and queued its own embedding). Raises
    ``EmbeddingsUnavailable`` with nothing written for this batch.
    """
    rows = _reembed_candidates(tenant=tenant, embedded_before=embedded_before)
    if after is not None:
        rows = rows.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], id__gt=after[1]))
    batch = list(
        rows.order_by("created_at", "id").only("pk", "title", "body", "version", "created_at")[
            :batch_size
        ]
    )
    if not batch:
        return ArticleReembedBatch(fetched=0, stored=0, cursor=None)
    vectors = embed_texts(
        config, [article_embedding_text(title=row.title, body=row.body) for row in batch]
    )
    # Overwrites whatever vector the row has, but only at the version embedded and only in
    # this tenant.
    stored = store_vectors(
        table=Article._meta.db_table,
        ids=[str(row.pk) for row in batch],
        vectors=vectors,
        model=config.fingerprint,
        versions=[row.version for row in batch],
        tenant_id=tenant.pk,
        only_unembedded=False,
    )
    last = batch[-1]
    return ArticleReembedBatch(fetched=len(batch), stored=stored, cursor=(last.created_at, last.pk))


def article_migrate_batch(
    *, tenant: Tenant, config: EmbeddingConfig, limit: int
) -> tuple[int, int]:
    """Re-embed with ``config`` the tenant's ``limit`` oldest articles whose vector another
    model made (archived ones too, so none stays behind for an unarchive to find), stamped
    with its model: the article half of the background model migration. Returns (read,
    written). Only an article still at the version embedded is written: an edit meanwhile
    cleared the vector and queued its own embedding. Raises ``EmbeddingsUnavailable`` with
    nothing written."""
    model = config.fingerprint
    rows = oldest_of_other_models(
        Article,
        tenant_id=tenant.pk,
        model=model,
        fields=["title", "body", "version"],
        limit=limit,
        using=PRIMARY,
    )
    if not rows:
        return 0, 0
    vectors = embed_texts(
        config, [article_embedding_text(title=row.title, body=row.body) for row in rows]
    )
    stored = store_vectors(
        table=Article._meta.db_table,
        ids=[str(row.pk) for row in rows],
        vectors=vectors,
        model=model,
        versions=[row.version for row in rows],
        tenant_id=tenant.pk,
        only_unembedded=False,
    )
    return len(rows), stored
