"""The background model migration: move each tenant's vectors to its current model, online.

When a tenant's embedding model changes (its own provider reconfigured, or the deployment's
default moved: a new ``ENGRAM_LOCAL_EMBEDDING_MODEL``, or a release that changes the default),
its stored vectors were made by the old model. Recall never compares a query with them (the
vector leg ranks only rows of the query's model; the keyword leg still finds every row), and
this task re-embeds them with the current model, oldest first, on the beat
(``dataops.migrate_embeddings``, every ``ENGRAM_EMBEDDING_MIGRATION_INTERVAL_S``).

* **Bounded.** A run re-embeds at most ``EMBEDDING_MIGRATION_ROWS_PER_RUN`` rows, shared fairly
  among the tenants that have rows to move (at least one batch each), memories first, then
  articles. A run is a handful of provider calls per tenant, so the drain that embeds fresh
  writes is never queued behind a whole re-embed, and one tenant's migration never delays
  another's.
* **Resumable by construction.** What is left is exactly the rows whose ``embedding_model`` is
  not the tenant's current fingerprint; each batch is written (vectors and model) in one
  statement, so an interrupted run loses at most the batch it was embedding, and the next run
  carries on. Nothing else records progress.
* **One writer per tenant.** A run takes the tenant's ``reembed`` lock without waiting: a tenant
  that ``manage.py reembed`` (or another run) is working on is skipped this time.
* **A provider outage** stops that tenant's share at the first failed call (its circuit breaker
  counts it, as for any call); the rows stay as they were, and recall keeps answering.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.db.routers import PRIMARY
from apps.core.embedding_models import ARTICLE_TABLE, MEMORY_TABLE, embedding_model_pairs
from apps.core.telemetry import emit
from apps.dataops.exceptions import ReembedAlreadyRunning
from apps.dataops.services.reembed import TenantReembedLock
from apps.knowledge.services import article_migrate_batch
from apps.memory.services import memory_migrate_batch
from apps.providers.embeddings import EmbeddingsUnavailable
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config, tenant_embedding_fingerprint


@dataclass
class MigrationRun:
    """What one run of the background migration did."""

    #: Tenants that had rows of another model when the run started.
    tenants: int = 0
    memories: int = 0
    articles: int = 0
    #: Slugs of the tenants skipped because a reembed held them.
    busy: list[str] = field(default_factory=list)
    #: Tenant id → reason, for tenants whose provider failed.
    unavailable: dict[str, str] = field(default_factory=dict)


def tenants_to_migrate() -> list[Tenant]:
    """The tenants with at least one vector that their current model did not make, by id."""
    models: dict[uuid.UUID, set[str]] = {}
    for table in (MEMORY_TABLE, ARTICLE_TABLE):
        for tenant_id, model in embedding_model_pairs(table=table, using=PRIMARY):
            models.setdefault(tenant_id, set()).add(model)
    if not models:
        return []
    tenants = Tenant.objects.using(PRIMARY).filter(pk__in=list(models)).order_by("pk")
    return [
        tenant
        for tenant in tenants
        if models[tenant.pk] - {tenant_embedding_fingerprint(tenant=tenant)}
    ]


def _migrate_tenant(*, tenant: Tenant, share: int, run: MigrationRun) -> None:
    """Up to ``share`` of the tenant's rows, memories first, a batch (one provider call) at a
    time. Raises ``EmbeddingsUnavailable`` after writing the batches before the failure."""
    config = tenant_embedding_config(tenant=tenant)
    batch_size = max(1, settings.EMBEDDING_BATCH_SIZE)
    done = 0
    for kind in ("memories", "articles"):
        while done < share:
            limit = min(batch_size, share - done)
            if kind == "memories":
                batch = memory_migrate_batch(tenant=tenant, config=config, limit=limit)
                fetched, stored = batch.fetched, batch.stored
                run.memories += stored
            else:
                fetched, stored = article_migrate_batch(tenant=tenant, config=config, limit=limit)
                run.articles += stored
            done += fetched
            if fetched < limit:
                break  # none of this kind left


def embeddings_migrate(*, max_rows: int | None = None) -> MigrationRun:
    """One run of the background migration (see the module docstring)."""
    run = MigrationRun()
    budget = settings.EMBEDDING_MIGRATION_ROWS_PER_RUN if max_rows is None else max_rows
    if budget <= 0:
        return run
    tenants = tenants_to_migrate()
    run.tenants = len(tenants)
    if not tenants:
        return run
    share = max(settings.EMBEDDING_BATCH_SIZE, budget // len(tenants))
    for tenant in tenants:
        try:
            with TenantReembedLock(tenant):
                _migrate_tenant(tenant=tenant, share=share, run=run)
        except ReembedAlreadyRunning:
            run.busy.append(tenant.slug)
        except EmbeddingsUnavailable as exc:
            run.unavailable[str(tenant.pk)] = exc.reason
            emit(
                "embedding_migration.unavailable",
                {"count": 1},
                {"tenant_id": str(tenant.pk), "reason": exc.reason},
            )
    if run.memories or run.articles:
        emit(
            "embedding_migration.migrated",
            {"memories": run.memories, "articles": run.articles},
            {"tenants": run.tenants},
        )
    return run
