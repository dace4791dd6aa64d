"""Tombstones: the per-subject content fingerprints of forgotten memories.

Written by forget, read by promotion (a forgotten fact is not re-extracted from its session)
and graduation (it is not re-published), removed by an explicit write of the same text. They
hold a sha256 of the normalised text, never the text.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.memory.models import MemoryTombstone
from apps.tenancy.models import Tenant


def tombstone_record(*, tenant: Tenant, subject_id: str, content_hashes: Iterable[str]) -> int:
    """Record fingerprints (helper: call inside the forget's transaction)."""
    rows = [
        MemoryTombstone(tenant=tenant, subject_id=subject_id, content_hash=content_hash)
        for content_hash in sorted(set(content_hashes))
    ]
    MemoryTombstone.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def tombstone_clear(*, tenant: Tenant, subject_id: str, content_hashes: Iterable[str]) -> int:
    """Drop fingerprints the subject explicitly wrote again (helper, inside the write)."""
    hashes = sorted(set(content_hashes))
    if not hashes:
        return 0
    deleted, _ = MemoryTombstone.objects.filter(
        tenant=tenant, subject_id=subject_id, content_hash__in=hashes
    ).delete()
    return deleted


def tombstoned(*, tenant: Tenant, subject_id: str, content_hashes: Iterable[str]) -> set[str]:
    """The subset of ``content_hashes`` the subject forgot."""
    hashes = sorted(set(content_hashes))
    if not hashes:
        return set()
    return set(
        MemoryTombstone.objects.filter(
            tenant=tenant, subject_id=subject_id, content_hash__in=hashes
        ).values_list("content_hash", flat=True)
    )
