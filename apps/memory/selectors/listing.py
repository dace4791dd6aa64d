from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from apps.core.db.filters import RecordFilter
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
    narrowing: RecordFilter | None,
) -> QuerySet[Memory]:
    if project_id is not None:
        queryset = queryset.filter(project_partition(project_id=project_id))
    if source:
        queryset = queryset.filter(source=source)
    if tags:
        queryset = queryset.filter(tags__contains=list(tags))
    if narrowing is not None:
        queryset = queryset.filter(narrowing.q)
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
    narrowing: RecordFilter | None = None,
) -> Page[Memory]:
    """The subject's long-term memories, newest first.

    Without ``project_id`` every partition is listed (a review of everything the subject
    holds); with it, global ∪ that project, as recall reads. ``tags``: only memories
    carrying all of them. ``as_of``: the memories whose fact held then (superseded since or
    not) instead of the live ones. ``narrowing``: only those a tag and metadata filter keeps
    (:func:`~apps.core.db.filters.record_filter_parse`).
    """
    queryset = _filtered(
        Memory.objects.filter(tenant=tenant, subject_id=subject_id),
        project_id=project_id,
        source=source,
        include_superseded=include_superseded,
        tags=tags,
        as_of=as_of,
        narrowing=narrowing,
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
    narrowing: RecordFilter | None = None,
) -> Page[Memory]:
    """Operator oversight: every subject's memories in one tenant."""
    queryset = _filtered(
        Memory.objects.filter(tenant=tenant),
        project_id=project_id,
        source=source,
        include_superseded=include_superseded,
        tags=tags,
        as_of=as_of,
        narrowing=narrowing,
    )
    return paginate(queryset, limit=limit, offset=offset)


@dataclass(frozen=True)
class SessionHistoryPage(Page[SessionMemory]):
    """A page of turns, which may hold fewer than asked for: ``next_offset`` is where the next
    page starts, None after the last."""

    @property
    def next_offset(self) -> int | None:
        following = self.offset + len(self.results)
        return following if following < self.total_count else None


#: One page of a session: the turns at ``offset`` (one scan of the session's index, as a plain
#: OFFSET/LIMIT page), their sizes summed in order, cut before the bytes bound.
SESSION_PAGE_SQL = f"""
SELECT * FROM (
    SELECT page.*,
           sum(page.size) OVER (ORDER BY page.seq) AS page_bytes,
           row_number() OVER (ORDER BY page.seq) AS position
      FROM (SELECT turn.*, session_turn_bytes(turn.content, turn.metadata) AS size
              FROM {SessionMemory._meta.db_table} AS turn
             WHERE turn.tenant_id = %(tenant)s AND turn.subject_id = %(subject)s
               AND turn.session_id = %(session)s AND turn.expires_at > %(now)s
             ORDER BY turn.seq
            OFFSET %(offset)s LIMIT %(limit)s) AS page
) AS sized
WHERE page_bytes <= %(max_bytes)s OR position = 1
ORDER BY seq
"""  # noqa: S608 - the table name comes from the model; every value is a parameter


def session_history(
    *, tenant: Tenant, subject_id: str, session_id: str, limit: int = 200, offset: int = 0
) -> SessionHistoryPage:
    """The caller's own turns of one session, in insertion order. A foreign session is empty.

    A page holds at most ``SESSION_HISTORY_MAX_TURNS`` turns (``limit`` is cut to it) and stops
    before the turn that would take it past ``SESSION_HISTORY_PAGE_MAX_BYTES`` (content plus
    metadata, as the session quota counts them: ``session_turn_bytes``, migration 0026),
    though never before its first turn. The sizes are summed in the database, so no turn
    past the page leaves it.
    """
    limit = min(limit, settings.SESSION_HISTORY_MAX_TURNS)
    now = timezone.now()  # expired turns are gone even before the prune runs
    params = {
        "tenant": tenant.pk,
        "subject": subject_id,
        "session": session_id,
        "now": now,
        "offset": offset,
        "limit": limit,
        "max_bytes": settings.SESSION_HISTORY_PAGE_MAX_BYTES,
    }
    turns = list(SessionMemory.objects.raw(SESSION_PAGE_SQL, params))
    total = SessionMemory.objects.filter(
        tenant=tenant, subject_id=subject_id, session_id=session_id, expires_at__gt=now
    ).count()
    return SessionHistoryPage(results=turns, total_count=total, limit=limit, offset=offset)
