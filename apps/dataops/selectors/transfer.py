"""Reading a tenant out as ``memory_export`` records (their format: ``export_format``)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.dataops.export_format import (
    ExportHeader,
    RecordType,
    article_to_mapping,
    link_to_mapping,
    memory_to_mapping,
    turn_to_mapping,
    watermark_to_mapping,
)
from apps.knowledge.selectors import knowledge_snapshot
from apps.memory.models import Memory, SessionMemory, SessionPromotion
from apps.projects.selectors import project_list
from apps.tenancy.models import Tenant

EXPORT_CHUNK_SIZE = 1_000


def _scoped(queryset: QuerySet[Any], *, tenant: Tenant, subject_id: str | None) -> QuerySet[Any]:
    queryset = queryset.filter(tenant=tenant)
    return queryset.filter(subject_id=subject_id) if subject_id is not None else queryset


def memory_export_records(
    *, tenant: Tenant, subject_id: str | None = None, include_knowledge: bool = True
) -> Generator[dict[str, Any], None, None]:
    """The header, then every record of the tenant (or of one subject), as JSON-ready dicts.

    Order: articles, article links, memories (created_at, id), session turns (seq), session
    watermarks. Knowledge is tenant-wide: with ``include_knowledge`` a subject export still
    carries every article. The whole read is one REPEATABLE READ snapshot (when not nested in
    an outer transaction), so the header's counts match the records even while agents write;
    the snapshot stays open until the iterator is exhausted or closed.
    """
    nested = connections[PRIMARY].in_atomic_block
    with transaction.atomic(using=PRIMARY):
        if not nested:
            with connections[PRIMARY].cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        memories = _scoped(Memory.objects.all(), tenant=tenant, subject_id=subject_id)
        turns = _scoped(SessionMemory.objects.all(), tenant=tenant, subject_id=subject_id)
        watermarks = _scoped(SessionPromotion.objects.all(), tenant=tenant, subject_id=subject_id)
        knowledge = knowledge_snapshot(tenant=tenant) if include_knowledge else None
        header = ExportHeader(
            tenant=tenant.slug,
            tenant_id=str(tenant.pk),
            embedding_dimensions=settings.EMBEDDING_DIMENSIONS,
            exported_at=timezone.now().isoformat(),
            subject=subject_id,
            includes_knowledge=include_knowledge,
            projects={str(project.pk): project.slug for project in project_list(tenant=tenant)},
            counts={
                RecordType.ARTICLE.value: len(knowledge.articles) if knowledge else 0,
                RecordType.ARTICLE_LINK.value: len(knowledge.links) if knowledge else 0,
                RecordType.MEMORY.value: memories.count(),
                RecordType.SESSION_TURN.value: turns.count(),
                RecordType.SESSION_PROMOTION.value: watermarks.count(),
            },
        )
        yield header.to_mapping()
        if knowledge is not None:
            yield from (article_to_mapping(article) for article in knowledge.articles)
            yield from (link_to_mapping(link) for link in knowledge.links)
        for memory in memories.order_by("created_at", "id").iterator(EXPORT_CHUNK_SIZE):
            yield memory_to_mapping(memory)
        for turn in turns.order_by("seq").iterator(EXPORT_CHUNK_SIZE):
            yield turn_to_mapping(turn)
        for watermark in watermarks.order_by("created_at", "id").iterator(EXPORT_CHUNK_SIZE):
            yield watermark_to_mapping(watermark)
