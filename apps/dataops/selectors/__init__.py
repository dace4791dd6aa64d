"""Tenant-wide reads: export, operator statistics, erasure receipts. Other packages import
these names from here, never from the submodules."""

from apps.dataops.selectors.embedding_models import (
    UNKNOWN_MODEL,
    ModelRows,
    TenantEmbeddingModels,
    embedding_migration_status,
    embedding_migration_status_cached,
)
from apps.dataops.selectors.erasure import erasure_receipt_list
from apps.dataops.selectors.stats import (
    ReembedProgress,
    SubjectStats,
    TenantStats,
    memory_stats,
)
from apps.dataops.selectors.transfer import memory_export_records

__all__ = [
    "UNKNOWN_MODEL",
    "ModelRows",
    "ReembedProgress",
    "SubjectStats",
    "TenantEmbeddingModels",
    "TenantStats",
    "embedding_migration_status",
    "embedding_migration_status_cached",
    "erasure_receipt_list",
    "memory_export_records",
    "memory_stats",
]
