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
