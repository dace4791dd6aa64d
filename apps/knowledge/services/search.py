"""What serving a knowledge search writes, after the read (the search selector only reads)."""

from __future__ import annotations

import uuid

from apps.knowledge.selectors import SearchResult
from apps.knowledge.services.access import record_surfaced
from apps.knowledge.viewer import Viewer
from apps.tenancy.models import Tenant


def knowledge_search_record(
    *, tenant: Tenant, viewer: Viewer, api_key_id: uuid.UUID | None, result: SearchResult
) -> int:
    """Mark the served rows in the search's shown-history and record them as ``surfaced``
    under the result's ``search_id``; returns the events written."""
    article_ids = [hit.article.pk for hit in result.results]
    if not article_ids:
        return 0
    if result.history is not None:
        result.history.mark(article_ids)
    return record_surfaced(
        tenant=tenant,
        viewer=viewer,
        api_key_id=api_key_id,
        search_id=result.search_id,
        article_ids=article_ids,
    )
