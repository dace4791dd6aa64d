"""Operator statistics per tenant and per subject (``memory_stats``).

A fixed number of grouped queries whatever the number of tenants, subjects or rows: one per
table, plus the promotion backlog, which fingerprints the sweep window's sessions in SQL the
same way the promotion watermark does in Python (``session_fingerprint``), and the figures each
per-subject bound checks (stored session bytes as the session quota counts them, articles per
author, compiles in the budget's hour), beside the bounds themselves (``TenantStats.limits``).
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Count, Q
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.dataops.models import ReembedRun
from apps.knowledge.selectors import article_author_counts, article_status_counts
from apps.memory.models import (
    PROMOTION_BUDGET_STATUSES,
    Memory,
    MemorySource,
    PromotionJob,
    PromotionJobStatus,
    SessionMemory,
    SessionPromotion,
)
from apps.tenancy.models import Tenant
from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX

FAILED_JOBS_WINDOW = timedelta(hours=24)
#: The promotion budget's rolling window (``apps.memory.services.promotion.BUDGET_WINDOW``).
PROMOTION_BUDGET_WINDOW = timedelta(hours=1)


@dataclass
class SubjectStats:
    subject_id: str
    #: Long-term rows not superseded, and superseded ones.
    memories_live: int = 0
    memories_superseded: int = 0
    #: Rows (live or superseded) still without a vector.
    embeddings_pending: int = 0
    #: Live rows by source.
    memories_promoted: int = 0
    memories_explicit: int = 0
    #: Live, ungraduated rows recalled at least MEMORY_GRADUATION_RECALL_THRESHOLD times.
    graduation_backlog: int = 0
    #: Unexpired session turns, the distinct sessions they form, and expired turns the
    #: prune task has not deleted yet.
    session_turns: int = 0
    sessions: int = 0
    session_turns_expired: int = 0
    #: Sessions the sweep would still promote: inside the sweep window, at least two live
    #: turns, and never promoted / changed since their watermark.
    promotion_never_promoted: int = 0
    promotion_changed: int = 0
    #: Promotion jobs in flight, and jobs that failed in the last 24 hours.
    promotion_jobs_queued: int = 0
    promotion_jobs_running: int = 0
    promotion_jobs_failed_24h: int = 0
    #: Compiles reserved in the last hour: what the subject's share of the promotion budget
    #: counts (PROMOTION_SUBJECT_BUDGET_PER_HOUR).
    promotion_compiles_hour: int = 0
    #: Bytes of the stored session turns, expired ones included, as the session quota counts
    #: them (SESSION_QUOTA_BYTES; its turn count is session_turns + session_turns_expired).
    session_bytes: int = 0
    #: Articles the subject wrote, archived ones included (KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR).
    articles_authored: int = 0


#: The SubjectStats figures, summed into the tenant's totals.
SUBJECT_FIGURES = tuple(name for name in SubjectStats.__dataclass_fields__ if name != "subject_id")


@dataclass(frozen=True)
class ReembedProgress:
    run_id: str
    provider: str
    started_at: datetime
    memories_embedded: int
    articles_embedded: int
    last_error: str


@dataclass
class TenantStats:
    tenant_id: uuid.UUID
    slug: str
    halted: bool
    subjects: list[SubjectStats] = field(default_factory=list)
    articles: dict[str, int] = field(default_factory=dict)
    #: The tenant's unfinished ``reembed`` run, if one was interrupted (or is running).
    reembed_in_progress: ReembedProgress | None = None

    @property
    def limits(self) -> dict[str, int]:
        """The bounds the figures are held to: per subject unless named per tenant."""
        return {
            "memories_live": settings.MEMORY_QUOTA_LIVE_ROWS,
            "memories_superseded": settings.MEMORY_QUOTA_SUPERSEDED_ROWS,
            "session_turns": settings.SESSION_QUOTA_TURNS,
            "session_bytes": settings.SESSION_QUOTA_BYTES,
            "articles_authored": settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR,
            "articles_per_tenant": settings.KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT,
            "promotion_compiles_hour": settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR,
            "promotion_compiles_hour_per_tenant": settings.PROMOTION_BUDGET_PER_HOUR,
        }

    @property
    def totals(self) -> dict[str, int]:
        return {
            name: sum(getattr(subject, name) for subject in self.subjects)
            for name in SUBJECT_FIGURES
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.slug,
            "tenant_id": str(self.tenant_id),
            "halted": self.halted,
            "totals": self.totals,
            "articles": self.articles,
            "limits": self.limits,
            "reembed_in_progress": (
                asdict(self.reembed_in_progress) if self.reembed_in_progress else None
            ),
            "subjects": [asdict(subject) for subject in self.subjects],
        }


_PROMOTION_BACKLOG_SQL = """
WITH live AS (
    SELECT tenant_id, subject_id, session_id, seq, role, content, created_at
      FROM {turns}
     WHERE tenant_id = ANY(%(tenants)s::uuid[])
       AND expires_at > %(now)s
       AND NOT starts_with(subject_id, %(reserved)s)
), recent AS (
    SELECT tenant_id, subject_id, session_id
      FROM live
     GROUP BY tenant_id, subject_id, session_id
    HAVING count(*) >= 2 AND max(created_at) >= %(window_start)s
), fingerprints AS (
    -- session_fingerprint(): sha256 over (8-byte big-endian length, UTF-8 bytes) of each
    -- turn's role and content, in seq order.
    SELECT l.tenant_id, l.subject_id, l.session_id,
           encode(sha256(string_agg(
               int8send(octet_length(convert_to(l.role, 'UTF8'))::bigint)
               || convert_to(l.role, 'UTF8')
               || int8send(octet_length(convert_to(l.content, 'UTF8'))::bigint)
               || convert_to(l.content, 'UTF8'),
               ''::bytea ORDER BY l.seq)), 'hex') AS fingerprint
      FROM live l
      JOIN recent r
        ON r.tenant_id = l.tenant_id AND r.subject_id = l.subject_id
       AND r.session_id = l.session_id
     GROUP BY l.tenant_id, l.subject_id, l.session_id
)
SELECT f.tenant_id, f.subject_id,
       count(*) FILTER (WHERE p.id IS NULL) AS never_promoted,
       count(*) FILTER (WHERE p.id IS NOT NULL AND p.content_hash <> f.fingerprint) AS changed
  FROM fingerprints f
  LEFT JOIN {watermarks} p
    ON p.tenant_id = f.tenant_id AND p.subject_id = f.subject_id
   AND p.session_id = f.session_id
 GROUP BY f.tenant_id, f.subject_id
"""


def _promotion_backlog(
    *, tenant_ids: list[uuid.UUID], now: datetime
) -> list[tuple[uuid.UUID, str, int, int]]:
    sql = _PROMOTION_BACKLOG_SQL.format(
        turns=SessionMemory._meta.db_table, watermarks=SessionPromotion._meta.db_table
    )
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            sql,
            {
                "tenants": [str(pk) for pk in tenant_ids],
                "now": now,
                "reserved": RESERVED_SUBJECT_PREFIX,
                "window_start": now - timedelta(seconds=settings.PROMOTION_SWEEP_WINDOW_SECONDS),
            },
        )
        return [(row[0], row[1], int(row[2]), int(row[3])) for row in cursor.fetchall()]


_SESSION_BYTES_SQL = """
SELECT tenant_id, subject_id, bytes FROM session_scope_usage WHERE tenant_id = ANY(%s::uuid[])
"""


def _session_bytes(*, tenant_ids: list[uuid.UUID]) -> list[tuple[uuid.UUID, str, int]]:
    """Each subject's stored session bytes, from the count the session quota reads (kept by
    triggers, migration 0026)."""
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(_SESSION_BYTES_SQL, [[str(pk) for pk in tenant_ids]])
        return [(row[0], row[1], int(row[2])) for row in cursor.fetchall()]


def memory_stats(*, tenant: Tenant | None = None, now: datetime | None = None) -> list[TenantStats]:
    """Counts for ``tenant`` (or every tenant, by slug), each with one row per subject that
    has any memory, session turn, promotion job or article it wrote. Nine queries whatever the
    data size."""
    now = now or timezone.now()
    tenants = [tenant] if tenant is not None else list(Tenant.objects.order_by("slug"))
    if not tenants:
        return []
    tenant_ids = [t.pk for t in tenants]
    subjects: dict[tuple[uuid.UUID, str], SubjectStats] = {}

    def subject(tenant_id: uuid.UUID, subject_id: str) -> SubjectStats:
        key = (tenant_id, subject_id)
        if key not in subjects:
            subjects[key] = SubjectStats(subject_id=subject_id)
        return subjects[key]

    live = Q(superseded_by__isnull=True)
    memory_rows = (
        Memory.objects.filter(tenant_id__in=tenant_ids)
        .values("tenant_id", "subject_id")
        .annotate(
            live=Count("pk", filter=live),
            superseded=Count("pk", filter=~live),
            pending=Count("pk", filter=Q(embedding__isnull=True)),
            promoted=Count("pk", filter=live & Q(source=MemorySource.PROMOTED)),
            explicit=Count("pk", filter=live & Q(source=MemorySource.EXPLICIT)),
            graduation=Count(
                "pk",
                filter=live
                # Never graduated, or its article was deleted since (it graduates afresh).
                & (Q(graduated_at__isnull=True) | Q(graduated_article__isnull=True))
                & Q(recall_count__gte=settings.MEMORY_GRADUATION_RECALL_THRESHOLD),
            ),
        )
        .order_by()
    )
    for row in memory_rows:
        stats = subject(row["tenant_id"], row["subject_id"])
        stats.memories_live = row["live"]
        stats.memories_superseded = row["superseded"]
        stats.embeddings_pending = row["pending"]
        stats.memories_promoted = row["promoted"]
        stats.memories_explicit = row["explicit"]
        stats.graduation_backlog = row["graduation"]

    unexpired = Q(expires_at__gt=now)
    turn_rows = (
        SessionMemory.objects.filter(tenant_id__in=tenant_ids)
        .values("tenant_id", "subject_id")
        .annotate(
            turns=Count("pk", filter=unexpired),
            sessions=Count("session_id", filter=unexpired, distinct=True),
            expired=Count("pk", filter=~unexpired),
        )
        .order_by()
    )
    for turn_row in turn_rows:
        stats = subject(turn_row["tenant_id"], turn_row["subject_id"])
        stats.session_turns = turn_row["turns"]
        stats.sessions = turn_row["sessions"]
        stats.session_turns_expired = turn_row["expired"]
    for tenant_id, subject_id, stored_bytes in _session_bytes(tenant_ids=tenant_ids):
        subject(tenant_id, subject_id).session_bytes = stored_bytes

    for tenant_id, subject_id, never_promoted, changed in _promotion_backlog(
        tenant_ids=tenant_ids, now=now
    ):
        stats = subject(tenant_id, subject_id)
        stats.promotion_never_promoted = never_promoted
        stats.promotion_changed = changed

    failed_recently = Q(status=PromotionJobStatus.FAILED, finished_at__gte=now - FAILED_JOBS_WINDOW)
    # What the hourly promotion budget counts (promotion._budget_spent).
    budgeted = Q(created_at__gt=now - PROMOTION_BUDGET_WINDOW, status__in=PROMOTION_BUDGET_STATUSES)
    job_rows = (
        PromotionJob.objects.filter(tenant_id__in=tenant_ids)
        .filter(
            Q(status__in=(PromotionJobStatus.QUEUED, PromotionJobStatus.RUNNING))
            | failed_recently
            | budgeted
        )
        .values("tenant_id", "subject_id")
        .annotate(
            queued=Count("pk", filter=Q(status=PromotionJobStatus.QUEUED)),
            running=Count("pk", filter=Q(status=PromotionJobStatus.RUNNING)),
            failed=Count("pk", filter=failed_recently),
            compiles=Count("pk", filter=budgeted),
        )
        .order_by()
    )
    for job_row in job_rows:
        stats = subject(job_row["tenant_id"], job_row["subject_id"])
        stats.promotion_jobs_queued = job_row["queued"]
        stats.promotion_jobs_running = job_row["running"]
        stats.promotion_jobs_failed_24h = job_row["failed"]
        stats.promotion_compiles_hour = job_row["compiles"]

    for (tenant_id, author), count in article_author_counts(tenants=tenants).items():
        subject(tenant_id, author).articles_authored = count

    articles = article_status_counts(tenants=tenants)
    runs = {
        run.tenant_id: run
        for run in ReembedRun.objects.filter(tenant_id__in=tenant_ids, finished_at__isnull=True)
    }
    by_tenant: dict[uuid.UUID, list[SubjectStats]] = {t.pk: [] for t in tenants}
    for (tenant_id, _), stats in sorted(subjects.items()):
        by_tenant[tenant_id].append(stats)
    result = []
    for t in tenants:
        run = runs.get(t.pk)
        result.append(
            TenantStats(
                tenant_id=t.pk,
                slug=t.slug,
                halted=t.is_halted,
                subjects=by_tenant[t.pk],
                articles=articles[t.pk],
                reembed_in_progress=(
                    ReembedProgress(
                        run_id=str(run.pk),
                        provider=run.provider,
                        started_at=run.started_at,
                        memories_embedded=run.memories_embedded,
                        articles_embedded=run.articles_embedded,
                        last_error=run.last_error,
                    )
                    if run is not None
                    else None
                ),
            )
        )
    return result
