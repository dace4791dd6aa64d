"""Graduation: a memory that proved valuable becomes a knowledge article (spec "Graduation").

Every graduation goes through the knowledge app's novelty gate (``propose_article``), as the
owning subject, into an OWNER-visible article: an agent's private memory never becomes
knowledge its peers can find. A memory graduates at most once while its article exists;
repeats short-circuit to the stored article without re-running the gate.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.telemetry import emit
from apps.knowledge.exceptions import GateUnavailable, TitleTaken
from apps.knowledge.services import articles_delete_for_memories, propose_article
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import (
    AlreadyGraduated,
    Forgotten,
    InvalidMemoryId,
    InvalidReScope,
    MemoryNotFound,
)
from apps.memory.models import GraduationDeferral, Memory
from apps.memory.services.tombstones import tombstoned
from apps.tenancy.models import Tenant

RE_SCOPE_GLOBAL = "global"
TITLE_MAX_CHARS = 120
GRADUATION_TAG = "graduated"
CATEGORY_BY_KIND = {"decision": "decision", "preference": "pattern"}
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraduationResult:
    verdict: str
    created: bool
    article: Any  # apps.knowledge.models.Article
    memory: Memory


@contextmanager
def _graduation_lock(memory_id: uuid.UUID) -> Iterator[None]:
    """Serialise graduations of one memory across connections.

    An advisory lock, because the novelty gate commits its own (durable) transaction: two
    concurrent first graduations queue here, and the second sees the first's stamp instead of
    racing it through the gate. Session-level on its own; inside a unit of work
    (an idempotent request) transaction-level, so it is held until that stamp commits.
    """
    key = f"memory-graduation:{memory_id}"
    connection = connections[PRIMARY]
    if connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [key])


def parse_memory_id(memory_id: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(memory_id))
    except ValueError as exc:
        raise InvalidMemoryId("memory_id must be a UUID.") from exc


def parse_re_scope(re_scope: object) -> str | None:
    """None (keep the memory's scope) or ``"global"``; anything else is 422 ``invalid_re_scope``."""
    if re_scope is not None and str(re_scope) != RE_SCOPE_GLOBAL:
        raise InvalidReScope('re_scope must be "global" or omitted.')
    return None if re_scope is None else RE_SCOPE_GLOBAL


def _title_for(memory: Memory) -> str:
    first_line = " ".join(memory.text.split())
    for end in (". ", "? ", "! "):
        if end in first_line:
            first_line = first_line.split(end, 1)[0] + end.strip()
            break
    if len(first_line) > TITLE_MAX_CHARS:
        first_line = first_line[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return first_line


def _propose(memory: Memory, *, to_global: bool) -> Any:
    kind = memory.metadata.get("kind") if isinstance(memory.metadata, dict) else None

    def propose(title: str) -> Any:
        return propose_article(
            tenant=memory.tenant,
            viewer=Viewer.for_subject(memory.subject_id),
            title=title,
            body=memory.text,
            category=CATEGORY_BY_KIND.get(str(kind), "finding"),
            # A memory's tags are the agent's; an alias: tag would claim the curated answer.
            tags=sorted({*(t for t in memory.tags if not t.startswith("alias:")), GRADUATION_TAG}),
            project_id=None if to_global else memory.project_id,
            visibility="owner",
            owner_agent_id=memory.subject_id,
            source="graduated",
            source_memory_id=memory.pk,
        )

    title = _title_for(memory)
    try:
        return propose(title)
    except TitleTaken:
        # Another article already uses this title for different content: disambiguate with
        # the memory's id rather than fail a graduation over a naming collision.
        return propose(f"{title[:100]} ({memory.pk.hex[:8]})")


def memory_graduate(
    *, tenant: Tenant, subject_id: str, memory_id: object, re_scope: str | None = None
) -> GraduationResult:
    """Graduate one of the caller's memories into the knowledge wiki.

    ``re_scope="global"`` promotes a project memory to a tenant-wide article, on its FIRST
    graduation only. A repeat asking for the scope it already has is a 200 no-op (``duplicate``);
    asking for a different one is 409 ``already_graduated``. The gate falling open is 503
    ``gate_unavailable`` and stamps nothing.
    """
    parsed = parse_memory_id(memory_id)
    re_scope = parse_re_scope(re_scope)
    with _graduation_lock(parsed):
        memory = (
            Memory.objects.select_related("tenant", "graduated_article")
            .filter(tenant=tenant, subject_id=subject_id, pk=parsed)
            .first()
        )
        if memory is None:
            raise MemoryNotFound("Memory not found.")
        if tombstoned(
            tenant=tenant, subject_id=subject_id, content_hashes=[memory.embedding_content_hash]
        ):
            # Only an import can bring back a row its subject forgot; it stays out of the wiki.
            raise Forgotten("The subject forgot this memory's text; it is not graduated.")
        to_global = re_scope == RE_SCOPE_GLOBAL or memory.project_id is None
        # A stamp whose article is gone (deleted by a forget or erasure of its source, which
        # may be another subject's memory this one was deduplicated into) no longer says where
        # the memory's knowledge is: the memory graduates afresh, as if it never had.
        if memory.graduated_at is not None and memory.graduated_article_id is not None:
            if memory.graduated_global != to_global:
                raise AlreadyGraduated(
                    "This memory already graduated into a differently scoped article.",
                    details={"article_id": str(memory.graduated_article_id)},
                )
            return GraduationResult(
                verdict="duplicate", created=False, article=memory.graduated_article, memory=memory
            )
        try:
            proposal = _propose(memory, to_global=to_global)
        except GateUnavailable:
            emit("memory_graduation.unavailable", {"count": 1}, {"tenant_id": str(tenant.pk)})
            raise
        stamped = Memory.objects.filter(
            Q(graduated_at__isnull=True) | Q(graduated_article__isnull=True), pk=memory.pk
        ).update(
            graduated_at=timezone.now(),
            graduated_article=proposal.article,
            graduated_global=to_global,
        )
        if not stamped and not Memory.objects.filter(pk=memory.pk).exists():
            # Forgotten while the gate ran (the gate commits on its own): the article it just
            # wrote must not outlive its only source.
            articles_delete_for_memories(tenant=tenant, memory_ids=[memory.pk])
            raise MemoryNotFound("Memory not found.")
        memory.refresh_from_db()
    emit(
        "memory_graduation.graduated",
        {"count": 1},
        {"tenant_id": str(tenant.pk), "verdict": proposal.verdict},
    )
    return GraduationResult(
        verdict=proposal.verdict, created=proposal.created, article=proposal.article, memory=memory
    )


@dataclass
class GraduationSweep:
    considered: int = 0
    graduated: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    unavailable: int = 0
    errors: int = 0
    halted: int = 0


# A live memory hot enough to graduate (never graduated, or its article was deleted since),
# not waiting out a failed attempt, whose content its subject has not forgotten. Written out
# in both CTEs below (not a shared CTE), so each is planned in place and the tenant scan
# still stops at its LIMIT.
_CANDIDATE_MEMORY = """
    (m.graduated_at IS NULL OR m.graduated_article_id IS NULL) AND m.superseded_by_id IS NULL
    AND m.recall_count >= %(threshold)s
    AND NOT EXISTS (SELECT 1 FROM memory_graduationdeferral d
                     WHERE d.memory_id = m.id AND d.retry_at > %(now)s)
    AND NOT EXISTS (SELECT 1 FROM memory_memorytombstone t
                     WHERE t.tenant_id = m.tenant_id
                       AND t.subject_id = m.subject_id
                       AND t.content_hash = m.embedding_content_hash)
"""
_SWEEP_CANDIDATES_SQL = f"""
    WITH tenants AS (
        SELECT DISTINCT m.tenant_id FROM memory_memory m
          JOIN tenancy_tenant tt ON tt.id = m.tenant_id AND tt.halted_at IS NULL
         WHERE {_CANDIDATE_MEMORY}
         LIMIT %(scan_limit)s
    ), ranked AS (
        SELECT m.id, m.tenant_id, m.subject_id,
               row_number() OVER (
                   PARTITION BY m.tenant_id ORDER BY m.recall_count DESC, m.created_at, m.id
               ) AS turn
          FROM memory_memory m JOIN tenants t ON t.tenant_id = m.tenant_id
         WHERE {_CANDIDATE_MEMORY}
    )
    SELECT id, tenant_id, subject_id FROM ranked
     WHERE turn <= %(per_tenant)s
     ORDER BY turn, tenant_id
     LIMIT %(read_limit)s
"""  # noqa: S608 - composed of the constants above; every value is a parameter


def _sweep_candidates(now: datetime) -> list[tuple[uuid.UUID, uuid.UUID, str]]:
    """Hot, ungraduated live memories of tenants not halted, interleaved round-robin; a
    memory waiting out a failed attempt (``GraduationDeferral``) is not a candidate.

    At most ``MEMORY_GRADUATION_SCAN_LIMIT`` distinct tenants are scanned, and at most
    2 x ``MEMORY_GRADUATION_MAX_PER_RUN`` rows are read, whatever the corpus size.
    """
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            _SWEEP_CANDIDATES_SQL,
            {
                "threshold": settings.MEMORY_GRADUATION_RECALL_THRESHOLD,
                "now": now,
                "scan_limit": settings.MEMORY_GRADUATION_SCAN_LIMIT,
                "per_tenant": settings.MEMORY_GRADUATION_MAX_PER_RUN,
                "read_limit": 2 * settings.MEMORY_GRADUATION_MAX_PER_RUN,
            },
        )
        return [(row[0], row[1], row[2]) for row in cursor.fetchall()]


def _defer(*, tenant_id: uuid.UUID, memory_id: uuid.UUID, reason: str, now: datetime) -> None:
    """Push a failing memory back: retry-after doubles per failure, capped at a week."""
    base = settings.MEMORY_GRADUATION_RETRY_AFTER_SECONDS
    deferral = GraduationDeferral.objects.filter(memory_id=memory_id).first()
    attempts = 1 if deferral is None else deferral.attempts + 1
    wait = timedelta(seconds=min(base * 2 ** (attempts - 1), 7 * 24 * 3600))
    GraduationDeferral.objects.update_or_create(
        memory_id=memory_id,
        defaults={
            "tenant_id": tenant_id,
            "attempts": attempts,
            "retry_at": now + wait,
            "reason": reason[:200],
        },
    )


def memory_graduation_sweep(*, now: datetime | None = None) -> GraduationSweep:
    """Graduate hot memories (recalled ≥ threshold times), fairly across tenants, bounded.

    Never re-scopes: a project memory graduates into a project article. A fell-open gate
    stamps nothing, so the memory is retried on a later run. Any other error is isolated to
    its memory, which is deferred (``GraduationDeferral``) so it cannot head the next run's
    queue. A halted tenant's memories are left alone.
    """
    now = now or timezone.now()
    result = GraduationSweep()
    for memory_id, tenant_id, subject_id in _sweep_candidates(now):
        if result.graduated >= settings.MEMORY_GRADUATION_MAX_PER_RUN:
            break
        result.considered += 1
        try:
            # Fresh each time: a halt lands between candidates, not only between runs.
            tenant = Tenant.objects.get(pk=tenant_id)
            if tenant.is_halted:
                result.halted += 1
                continue
            graduation = memory_graduate(tenant=tenant, subject_id=subject_id, memory_id=memory_id)
        except GateUnavailable:
            result.unavailable += 1
            continue
        except (AlreadyGraduated, MemoryNotFound, Forgotten):
            continue  # graduated or forgotten since the scan
        except Exception as exc:
            # One bad memory must not cost every memory behind it its graduation.
            logger.exception("graduation sweep: memory %s failed", memory_id)
            result.errors += 1
            _defer(tenant_id=tenant_id, memory_id=memory_id, reason=type(exc).__name__, now=now)
            continue
        GraduationDeferral.objects.filter(memory_id=memory_id).delete()
        result.graduated += 1
        result.verdicts[graduation.verdict] = result.verdicts.get(graduation.verdict, 0) + 1
    emit(
        "memory_graduation.sweep",
        {"considered": result.considered, "graduated": result.graduated},
        {
            "verdicts": result.verdicts,
            "unavailable": result.unavailable,
            "errors": result.errors,
            "halted": result.halted,
        },
    )
    return result
