"""Access events: the retrieval funnel surfaced → opened → referenced.

``surfaced`` and ``opened`` are observations the server makes. ``referenced`` is a client's
assertion about itself, so it is bounded rather than trusted: only articles that really were
surfaced under that search, in the caller's own tenant, are accepted, all or nothing. No read
set (heat, precision, "popular" lists) may ever count a ``referenced`` row as a read.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from django.conf import settings

from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import write_transaction
from apps.core.telemetry import emit
from apps.knowledge.exceptions import (
    InvalidArticleIds,
    InvalidSearchId,
    NotSurfaced,
    TooManyArticleIds,
)
from apps.knowledge.models import AccessType, ArticleAccessEvent
from apps.knowledge.viewer import Viewer
from apps.tenancy.models import Tenant


def _events(
    *,
    tenant: Tenant,
    viewer: Viewer,
    api_key_id: uuid.UUID | None,
    search_id: uuid.UUID | None,
    article_ids: Iterable[uuid.UUID],
    access_type: str,
) -> list[ArticleAccessEvent]:
    return [
        ArticleAccessEvent(
            tenant=tenant,
            article_id=article_id,
            access_type=access_type,
            search_id=search_id,
            api_key_id=api_key_id,
            subject_id=viewer.subject_id,
        )
        for article_id in article_ids
    ]


def record_surfaced(
    *,
    tenant: Tenant,
    viewer: Viewer,
    api_key_id: uuid.UUID | None,
    search_id: uuid.UUID,
    article_ids: Sequence[uuid.UUID],
) -> int:
    """Record that a search showed these articles (one row each, stamped with its id)."""
    rows = _events(
        tenant=tenant,
        viewer=viewer,
        api_key_id=api_key_id,
        search_id=search_id,
        article_ids=dict.fromkeys(article_ids),
        access_type=AccessType.SURFACED,
    )
    if rows:
        ArticleAccessEvent.objects.using(PRIMARY).bulk_create(rows)
    return len(rows)


def record_opened(
    *,
    tenant: Tenant,
    viewer: Viewer,
    api_key_id: uuid.UUID | None,
    article_id: uuid.UUID,
    search_id: uuid.UUID | None = None,
) -> None:
    """Record that the viewer read an article in full (``GET /articles/{id}``).

    An open attributed to ``search_id`` counts in the retrieval funnel, so the attribution is
    checked like a ``referenced`` one, and more narrowly: the search must be the viewer's own
    (its subject's) and must have surfaced this article, else 422 ``not_surfaced`` and
    nothing is written. A made-up, foreign or another subject's search id is the same 422.
    """
    if search_id is not None and not _surfaced_to(
        tenant=tenant, viewer=viewer, search_id=search_id, article_id=article_id
    ):
        raise NotSurfaced(
            "search_id must be a search of yours that surfaced this article; nothing was "
            "recorded. Omit it to open the article without attributing the open.",
            details={"search_id": str(search_id)},
        )
    ArticleAccessEvent.objects.using(PRIMARY).bulk_create(
        _events(
            tenant=tenant,
            viewer=viewer,
            api_key_id=api_key_id,
            search_id=search_id,
            article_ids=[article_id],
            access_type=AccessType.OPENED,
        )
    )


def _surfaced_to(
    *, tenant: Tenant, viewer: Viewer, search_id: uuid.UUID, article_id: uuid.UUID
) -> bool:
    return (
        ArticleAccessEvent.objects.using(PRIMARY)
        .filter(
            tenant=tenant,
            search_id=search_id,
            access_type=AccessType.SURFACED,
            article_id=article_id,
            subject_id=viewer.subject_id,
        )
        .exists()
    )


def _parse_search_id(search_id: object) -> uuid.UUID:
    if isinstance(search_id, uuid.UUID):
        return search_id
    try:
        return uuid.UUID(str(search_id).strip())
    except (TypeError, ValueError) as exc:
        raise InvalidSearchId("The search id is not a valid id.") from exc


def parse_article_ids(article_ids: object) -> list[uuid.UUID]:
    if isinstance(article_ids, str | bytes) or not isinstance(article_ids, Sequence):
        raise InvalidArticleIds("article_ids must be a non-empty list of article ids.")
    if not article_ids:
        raise InvalidArticleIds("article_ids must be a non-empty list of article ids.")
    maximum = settings.KNOWLEDGE_REFERENCED_MAX_IDS
    if len(article_ids) > maximum:
        raise TooManyArticleIds(
            f"At most {maximum} article ids per call.", details={"max_ids": maximum}
        )
    parsed: list[uuid.UUID] = []
    for value in article_ids:
        try:
            article_id = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
        except (TypeError, ValueError) as exc:
            raise InvalidArticleIds(
                "article_ids must be a non-empty list of article ids.",
                details={"invalid": str(value)[:64]},
            ) from exc
        if article_id not in parsed:
            parsed.append(article_id)
    return parsed


def record_referenced(
    *,
    tenant: Tenant,
    viewer: Viewer,
    api_key_id: uuid.UUID | None,
    search_id: uuid.UUID | str,
    article_ids: Sequence[uuid.UUID | str],
) -> int:
    """Record that the caller used these articles from search ``search_id``; all or nothing.

    Every id must have been surfaced under ``search_id`` in this tenant, otherwise the whole
    call is 422 ``not_surfaced`` and nothing is written. An unknown or foreign search id
    surfaced nothing, so it takes the same 422 (no cross-tenant existence oracle). Other
    422s: ``invalid_search_id``, ``invalid_article_ids``, ``too_many_article_ids`` (over
    ``KNOWLEDGE_REFERENCED_MAX_IDS``). Repeats are safe: metrics count distinct
    (search_id, article_id) pairs. Returns the number of rows written.
    """
    parsed_search_id = _parse_search_id(search_id)
    ids = parse_article_ids(article_ids)
    with write_transaction():
        surfaced = set(
            ArticleAccessEvent.objects.using(PRIMARY)
            .filter(
                tenant=tenant,
                search_id=parsed_search_id,
                access_type=AccessType.SURFACED,
                article_id__in=ids,
            )
            .values_list("article_id", flat=True)
            .distinct()
        )
        missing = [article_id for article_id in ids if article_id not in surfaced]
        if missing:
            raise NotSurfaced(
                "Only articles this search surfaced can be referenced; nothing was recorded.",
                details={"article_ids": [str(article_id) for article_id in missing]},
            )
        ArticleAccessEvent.objects.using(PRIMARY).bulk_create(
            _events(
                tenant=tenant,
                viewer=viewer,
                api_key_id=api_key_id,
                search_id=parsed_search_id,
                article_ids=ids,
                access_type=AccessType.REFERENCED,
            )
        )
    emit("knowledge_access.referenced", {"count": len(ids)}, {"tenant_id": str(tenant.pk)})
    return len(ids)
