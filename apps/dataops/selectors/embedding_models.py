"""How far each tenant's vectors are from its current model: rows per model fingerprint, per
tenant, for ``reembed --status`` and the ``/metrics`` gauges (the background migration,
``apps.dataops.services.migration``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache

from apps.core.db.routers import PRIMARY
from apps.core.embedding_models import ARTICLE_TABLE, MEMORY_TABLE, embedding_model_counts
from apps.providers.embedders.local_onnx import LOCAL_MODELS
from apps.providers.embeddings import EmbeddingConfig, model_fingerprint
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config, tenant_embedding_fingerprint

#: The label of a vector whose model is not known (stored before vectors named their model
#: and not stamped, or imported from such an export).
UNKNOWN_MODEL = "unknown"
_CACHE_KEY = "dataops:embedding-migration-status"


def _readable(config: EmbeddingConfig) -> str:
    """Endpoint, model and dimension, as ``reembed`` names a provider (never the key)."""
    return f"{config.endpoint_key}|{config.dimensions or settings.EMBEDDING_DIMENSIONS}"


@dataclass(frozen=True)
class ModelRows:
    """A tenant's vectors of one model."""

    fingerprint: str
    #: The model in words when this deployment knows it (a tenant's current provider, the
    #: default, a bundled local model), else the fingerprint.
    label: str
    current: bool
    memories: int = 0
    articles: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "label": self.label,
            "current": self.current,
            "memories": self.memories,
            "articles": self.articles,
        }


@dataclass(frozen=True)
class TenantEmbeddingModels:
    """One tenant's vectors by model, and its rows that have none yet."""

    tenant_id: uuid.UUID
    slug: str
    fingerprint: str
    label: str
    models: list[ModelRows] = field(default_factory=list)
    pending_memories: int = 0
    pending_articles: int = 0

    @property
    def remaining_memories(self) -> int:
        """Memories the background migration has still to move to the current model."""
        return sum(rows.memories for rows in self.models if not rows.current)

    @property
    def remaining_articles(self) -> int:
        return sum(rows.articles for rows in self.models if not rows.current)

    @property
    def migrated(self) -> bool:
        return self.remaining_memories == 0 and self.remaining_articles == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.slug,
            "tenant_id": str(self.tenant_id),
            "current_model": {"fingerprint": self.fingerprint, "label": self.label},
            "models": [rows.as_dict() for rows in self.models],
            "pending": {"memories": self.pending_memories, "articles": self.pending_articles},
            "remaining": {
                "memories": self.remaining_memories,
                "articles": self.remaining_articles,
            },
            "migrated": self.migrated,
        }


def _known_labels(tenants: list[Tenant]) -> dict[str, str]:
    labels = {
        model_fingerprint(f"local||{model.model_id}", None): (
            f"local||{model.model_id}|{settings.EMBEDDING_DIMENSIONS}"
        )
        for model in LOCAL_MODELS.values()
    }
    default = EmbeddingConfig.default()
    labels[default.fingerprint] = _readable(default)
    for tenant in tenants:
        config = tenant_embedding_config(tenant=tenant)
        labels[config.fingerprint] = _readable(config)
    labels[""] = UNKNOWN_MODEL
    return labels


def embedding_migration_status(*, tenant: Tenant | None = None) -> list[TenantEmbeddingModels]:
    """Every tenant with rows (or ``tenant`` alone): its current model and its vectors per
    model (memories and articles), in slug order. Reads whole indexes: an operator's or a
    scrape's (cached) question, never a request's."""
    tenant_id = None if tenant is None else tenant.pk
    counts: dict[uuid.UUID, dict[str | None, list[int]]] = {}
    for position, table in enumerate((MEMORY_TABLE, ARTICLE_TABLE)):
        for owner_id, model, rows in embedding_model_counts(
            table=table, using=PRIMARY, tenant_id=tenant_id
        ):
            counts.setdefault(owner_id, {}).setdefault(model, [0, 0])[position] += rows
    if tenant is not None:
        tenants = [tenant]
    else:
        tenants = list(Tenant.objects.using(PRIMARY).filter(pk__in=list(counts)).order_by("slug"))
    labels = _known_labels(tenants)
    statuses = []
    for owner in tenants:
        current = tenant_embedding_fingerprint(tenant=owner)
        mine = counts.get(owner.pk, {})
        pending = mine.pop(None, [0, 0])
        models = [
            ModelRows(
                fingerprint=model or "",
                label=labels.get(model or "", model or ""),
                current=model == current,
                memories=rows[0],
                articles=rows[1],
            )
            for model, rows in sorted(mine.items(), key=lambda item: (item[0] != current, item[0]))
            if model is not None
        ]
        statuses.append(
            TenantEmbeddingModels(
                tenant_id=owner.pk,
                slug=owner.slug,
                fingerprint=current,
                label=labels.get(current, current),
                models=models,
                pending_memories=pending[0],
                pending_articles=pending[1],
            )
        )
    return statuses


def embedding_migration_status_cached() -> list[TenantEmbeddingModels]:
    """:func:`embedding_migration_status` of every tenant, counted at most once per
    ``EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS`` (shared through the cache, so every web
    process answers a scrape from one count)."""
    cached = cache.get(_CACHE_KEY)
    if cached is not None:
        return list(cached)
    statuses = embedding_migration_status()
    cache.set(_CACHE_KEY, statuses, timeout=settings.EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS)
    return statuses
