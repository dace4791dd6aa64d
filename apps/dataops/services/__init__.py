"""Tenant-wide writes: erasure with receipts, import, re-embedding. Other packages import
these names from here, never from the submodules."""

from apps.dataops.services.erasure import (
    Erasure,
    erase_subject,
    erase_tenant,
    erasure_receipt_render,
    render_erasure,
    subject_digest,
)
from apps.dataops.services.migration import MigrationRun, embeddings_migrate, tenants_to_migrate
from apps.dataops.services.reembed import ReembedResult, memory_reembed, provider_fingerprint
from apps.dataops.services.transfer import TransferImportReport, memory_import

__all__ = [
    "Erasure",
    "MigrationRun",
    "ReembedResult",
    "TransferImportReport",
    "embeddings_migrate",
    "erase_subject",
    "erase_tenant",
    "erasure_receipt_render",
    "memory_import",
    "memory_reembed",
    "provider_fingerprint",
    "render_erasure",
    "subject_digest",
    "tenants_to_migrate",
]
