"""The model migration's progress on ``/metrics``: a Prometheus collector that reports, at each
scrape, the cached per-tenant counts (``embedding_migration_status_cached``), so a scrape costs
a cache read, and a recount at most once per ``EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS``.

* ``engram_embedding_rows{tenant, kind, model, current}`` — stored vectors per tenant, kind
  (``memory`` | ``article``) and model (the fingerprint; ``current`` is ``1`` for the tenant's
  current model);
* ``engram_embedding_migration_remaining_rows{tenant, kind}`` — vectors still to re-embed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY, Collector
from typing_extensions import override

logger = logging.getLogger("engram.dataops")


class EmbeddingMigrationCollector(Collector):
    @override
    def collect(self) -> Iterator[GaugeMetricFamily]:
        from apps.dataops.selectors import embedding_migration_status_cached

        rows = GaugeMetricFamily(
            "engram_embedding_rows",
            "Stored vectors per tenant, kind and model fingerprint (current=1: the tenant's "
            "current model)",
            labels=["tenant", "kind", "model", "current"],
        )
        remaining = GaugeMetricFamily(
            "engram_embedding_migration_remaining_rows",
            "Vectors another model than the tenant's current one made, still to re-embed",
            labels=["tenant", "kind"],
        )
        try:
            statuses = embedding_migration_status_cached()
        except Exception:
            # A scrape must never fail because the database did not answer a count.
            logger.warning("embedding migration status unavailable for /metrics", exc_info=True)
            return
        for status in statuses:
            for models in status.models:
                current = "1" if models.current else "0"
                model = models.fingerprint or "unknown"
                rows.add_metric([status.slug, "memory", model, current], models.memories)
                rows.add_metric([status.slug, "article", model, current], models.articles)
            remaining.add_metric([status.slug, "memory"], status.remaining_memories)
            remaining.add_metric([status.slug, "article"], status.remaining_articles)
        yield rows
        yield remaining

    def describe(self) -> Iterator[GaugeMetricFamily]:
        # Registration must not count anything (no database at import or start-up).
        return iter(())


_registered = False


def register_embedding_migration_metrics() -> None:
    """Add the collector to the default registry, once per process."""
    global _registered
    if not _registered:
        REGISTRY.register(EmbeddingMigrationCollector())
        _registered = True
