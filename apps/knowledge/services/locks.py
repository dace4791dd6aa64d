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


def lock_tenant_article_counts(*, tenant: Tenant) -> None:
    """Take the tenant's article count row (``knowledge_tenant_article_usage``, kept by
    triggers: migration 0006) until the current transaction ends.

    Every insert or delete of the tenant's articles moves that row, and holds it until it
    commits. A transaction that did so after it locked an article or a memory row could wait
    on the count row while its holder waits on that row: every writer of the counts takes it
    first instead (after the advisory locks: the knowledge writes' and the memory scope's), so
    they queue on it and never in a cycle. Taking it again in the same transaction is free.
    """
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM knowledge_tenant_article_usage WHERE tenant_id = %s FOR UPDATE",
            [tenant.pk],
        )
