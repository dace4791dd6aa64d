"""The advisory locks of the knowledge write path."""

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
    """Serialise the writers of the tenant's article counts (``knowledge_tenant_article_usage``,
    kept by triggers: migration 0006) until the current transaction ends.

    Every insert or delete of the tenant's articles moves the count row, and holds it until it
    commits. A transaction that did so after it locked an article or a memory row could wait
    on the count row while its holder waits on that row: every writer of the counts takes this
    lock first instead (after the advisory locks: the knowledge writes' and the memory scope's),
    so they queue here and never in a cycle. An advisory lock rather than the count row itself,
    because a tenant with no article has no row to lock: two writers would both pass, and the
    first article's insert would create the row mid-transaction, in whatever order the two
    reached it. Taking it again in the same transaction is free.
    """
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"knowledge-article-counts:{tenant.pk}"],
        )
