from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from apps.core.db.pagination import Page, paginate
from apps.memory.models import Memory, SessionMemory
from apps.memory.selectors.validity import in_time
from apps.projects.scoping import project_partition
from apps.tenancy.models import Tenant

# Listing never needs the vector (loading it would parse 384 floats per row for nothing) or
# the service's derived context (keyword-indexed, never returned).
LIST_DEFERRED_FIELDS = ("embedding", "derived_context")


def _filtered(
    queryset: QuerySet[Memory],
    *,
    project_id: uuid.UUID | None,
    source: str | None,
    include_superseded: bool,
    tags: Sequence[str] | None,
    as_of: datetime | None,
) -> QuerySet[Memory]:
    if project_id is not None:
        queryset = queryset.filter(project_partition(project_id=project_id))
    if source:
        queryset = queryset.filter(source=source)
    if tags:
        queryset = queryset.filter(tags__contains=list(tags))
    queryset = queryset.filter(in_time(include_superseded=include_superseded, as_of=as_of))
    return queryset.defer(*LIST_DEFERRED_FIELDS).order_by("-created_at", "-id")


def memory_list(
    *,
    tenant: Tenant,
    subject_id: str,
    project_id: uuid.UUID | None = None,
    source: str | None = None,
    tags: Sequence[str] | None = None,
    include_superseded: bool = False,
    limit: int = 50,
    offset: int = 0,
    as_of: datetime | None = None,
) -> Page[Memory]:
    """The subject's long-term memories, newest first.

    Without ``project_id`` every partition is listed (a review of everything the subject
    holds); with it, global ∪ that project, as recall reads. ``tags``: only memories
    carrying all of them. ``as_of``: the memories whose fact held then (superseded since or
    not) instead of the live ones.
    """
    queryset = _filtered(
        Memory.objects.filter(tenant=tenant, subject_id=subject_id),
        project_id=project_id,
        source=source,
        include_superseded=include_superseded,
        tags=tags,
        as_of=as_of,
    )
    return paginate(queryset, limit=limit, offset=offset)


def memory_list_all_subjects(
    *,
    tenant: Tenant,
    project_id: uuid.UUID | None = None,
    source: str | None = None,
    tags: Sequence[str] | None = None,
    include_superseded: bool = False,
    limit: int = 50,
    offset: int = 0,
    as_of: datetime | None = None,
) -> Page[Memory]:
    """Operator oversight: every subject's memories in one tenant."""
    queryset = _filtered(
        Memory.objects.filter(tenant=tenant),
        project_id=project_id,
        source=source,
        include_superseded=include_superseded,
        tags=tags,
        as_of=as_of,
    )
    return paginate(queryset, limit=limit, offset=offset)


def session_history(
    *, tenant: Tenant, subject_id: str, session_id: str, limit: int = 200, offset: int = 0
) -> Page[SessionMemory]:
    """The caller's own turns of one session, in insertion order. A foreign session is empty."""
    queryset = SessionMemory.objects.filter(
        tenant=tenant,
        subject_id=subject_id,
        session_id=session_id,
        expires_at__gt=timezone.now(),  # expired turns are gone even before the prune runs
    ).order_by("seq")
    return paginate(queryset, limit=limit, offset=offset)
