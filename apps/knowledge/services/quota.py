"""The article quotas: articles stored per tenant and per author.

Checked inside every article insert (:func:`apps.knowledge.services.articles.insert_article`)
under :func:`lock_knowledge_writes`, which every insert of the tenant's articles takes, and
with the tenant's count row held (:func:`lock_tenant_article_counts`), so two writers can never
both take the last place. The counts are kept by triggers (migration 0006): the check reads two
rows, whatever the tenant's size.
"""

from __future__ import annotations

from django.conf import settings

from apps.core.telemetry import emit
from apps.knowledge.exceptions import ArticleQuotaExceeded
from apps.knowledge.selectors import article_quota_counts
from apps.tenancy.models import Tenant


def article_admit(*, tenant: Tenant, author_subject_id: str) -> None:
    """Raise :class:`ArticleQuotaExceeded` unless one more article by ``author_subject_id``
    fits the author's quota and the tenant's ("" is charged to the tenant alone). Race-free
    with the locks above held; without them, a pre-check."""
    counts = article_quota_counts(tenant=tenant, author_subject_id=author_subject_id)
    author_quota = settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR
    tenant_quota = settings.KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT
    if author_subject_id and counts.author >= author_quota:
        scope, quota, stored = "author", author_quota, counts.author
    elif counts.tenant >= tenant_quota:
        scope, quota, stored = "tenant", tenant_quota, counts.tenant
    else:
        return
    emit(
        "knowledge_article.quota_exceeded",
        {"count": 1},
        {"tenant_id": str(tenant.pk), "scope": scope},
    )
    raise ArticleQuotaExceeded(
        f"This {scope} stores {stored} of {quota} articles; nothing was written.",
        details={"scope": scope, "quota": quota, "stored": stored},
    )
