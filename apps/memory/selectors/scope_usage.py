"""What a write into a subject's scope must know before it inserts: how many live memories the
subject holds (the quota) and how many superseded ones (the history quota), and whether it
forgot any of the texts being written (their tombstones go); for a session turn, how many
turns and bytes the subject stores. Read with the subject's scope lock held, so nothing changes
either until the writer commits.

The counts are ``memory_scope_usage`` and ``session_scope_usage``, kept by triggers
(migrations 0024 and 0027, 0026): one row, whatever the subject's size, where counting the
rows cost a write time in proportion to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apps.core.db.cursors import server_bound_cursor
from apps.core.db.routers import PRIMARY
from apps.memory.models import MemoryTombstone
from apps.tenancy.models import Tenant

ADMISSION_SQL = f"""
SELECT COALESCE(usage.live, 0),
       COALESCE(usage.superseded, 0),
       EXISTS (SELECT 1 FROM {MemoryTombstone._meta.db_table}
                WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
                  AND content_hash = ANY(%(hashes)s))
  FROM (SELECT 1) AS one
  LEFT JOIN memory_scope_usage AS usage
    ON usage.tenant_id = %(tenant)s AND usage.subject_id = %(subject)s
"""  # noqa: S608 - the table names come from the model and the migration


@dataclass(frozen=True)
class ScopeAdmission:
    #: The subject's live (not superseded) memories.
    live: int
    #: The subject's superseded memories (its history).
    superseded: int
    #: Whether any of the texts being written has a tombstone in the subject.
    tombstoned: bool


def memory_scope_admission(
    *, tenant: Tenant, subject_id: str, content_hashes: Sequence[str]
) -> ScopeAdmission:
    """The subject's live and superseded counts and whether any of ``content_hashes`` is
    tombstoned, in one statement on the primary."""
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(
            ADMISSION_SQL,
            {"tenant": tenant.pk, "subject": subject_id, "hashes": sorted(set(content_hashes))},
        )
        live, superseded, tombstoned = cursor.fetchone()
    return ScopeAdmission(live=int(live), superseded=int(superseded), tombstoned=bool(tombstoned))


def memory_live_count(*, tenant: Tenant, subject_id: str) -> int:
    """The subject's live memories (read on the primary)."""
    return memory_scope_admission(tenant=tenant, subject_id=subject_id, content_hashes=[]).live


SESSION_USAGE_SQL = """
SELECT turns, bytes FROM session_scope_usage WHERE tenant_id = %s AND subject_id = %s
"""


@dataclass(frozen=True)
class SessionUsage:
    #: The subject's stored session turns, expired ones included until the prune deletes them.
    turns: int
    #: Their sizes summed: content plus metadata as JSON text, in UTF-8 bytes.
    bytes: int


def session_scope_usage(*, tenant: Tenant, subject_id: str) -> SessionUsage:
    """The subject's stored session turns and their bytes (``session_scope_usage``, kept by
    triggers: migration 0026), one row read on the primary."""
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(SESSION_USAGE_SQL, [tenant.pk, subject_id])
        row = cursor.fetchone()
    return SessionUsage(turns=0, bytes=0) if row is None else SessionUsage(int(row[0]), int(row[1]))
