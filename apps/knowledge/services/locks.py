"""The one advisory lock of the knowledge write path."""

from __future__ import annotations

from django.db import connections

from apps.core.db.routers import PRIMARY
from apps.tenancy.models import Tenant


def lock_knowledge_writes(*, tenant: Tenant) -> None:
    """Serialise the tenant's article inserts and title changes until the transaction ends.

    Per tenant rather than per title: the novelty gate's check-then-insert must also stop two
    concurrent proposals with *different* titles but the same (or near-same) content from
    both being created, and title uniqueness is case-insensitive. Only the checks and the
    insert run under it (embedding happens before), so it is held for milliseconds, and
    article writes are rare next to reads.
    """
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"knowledge-writes:{tenant.pk}"],
        )
