"""Tenant-wide reads: export, operator statistics, erasure receipts. Other packages import
these names from here, never from the submodules."""

from apps.dataops.selectors.erasure import erasure_receipt_list
from apps.dataops.selectors.stats import (
    ReembedProgress,
    SubjectStats,
    TenantStats,
    memory_stats,
)
from apps.dataops.selectors.transfer import memory_export_records

__all__ = [
    "ReembedProgress",
    "SubjectStats",
    "TenantStats",
    "erasure_receipt_list",
    "memory_export_records",
    "memory_stats",
]
