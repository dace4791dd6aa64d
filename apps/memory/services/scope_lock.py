from apps.core.db.cursors import server_bound_cursor
from apps.core.db.routers import PRIMARY
from apps.tenancy.models import Tenant


def lock_memory_scope(*, tenant: Tenant, subject_id: str) -> None:
    """Serialise writers of one (tenant, subject) until the current transaction ends.

    The quota check reads the live count and then inserts; holding this transaction-scoped
    advisory lock across both makes the cap race-free without locking any table rows.
    """
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"memory-scope:{tenant.pk}:{subject_id}"],
        )


def lock_session_scope(*, tenant: Tenant, subject_id: str) -> None:
    """Serialise the session-turn writers of one (tenant, subject) until the current
    transaction ends: the session quota reads the subject's stored turns and then inserts.

    A lock of its own, not the memory scope's, so session appends never wait for long-term
    writes; a writer of both tiers (a mixed batch) takes the memory scope's first.
    """
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"session-scope:{tenant.pk}:{subject_id}"],
        )


def lock_tenant_memory_counts(*, tenant: Tenant) -> None:
    """Wait for every transaction that moved one of the tenant's live counts to end, and keep
    new ones off the existing subjects' counts until the current transaction ends.

    A write holds its subject's row of ``memory_scope_usage`` (migration 0024) from its insert
    until it commits. A tenant-wide change of the memory rows that then needed that count row
    while the write waited on one of the rows it had locked would deadlock; taking every count
    row first, in one order, makes it wait for such writes before it locks any memory row.
    """
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(
            "SELECT 1 FROM memory_scope_usage WHERE tenant_id = %s ORDER BY subject_id FOR UPDATE",
            [tenant.pk],
        )
