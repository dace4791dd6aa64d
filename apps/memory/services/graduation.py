"""Graduation: a memory that proved valuable becomes a knowledge article (spec "Graduation").

Every graduation goes through the knowledge app's novelty gate (``propose_article``), as the
owning subject, into an OWNER-visible article: an agent's private memory never becomes
knowledge its peers can find. A memory graduates at most once; repeats short-circuit to the
stored article without re-running the gate.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections
from django.utils import timezone

from apps.core.db.routers import PRIMARY
from apps.core.telemetry import emit
from apps.knowledge.exceptions import GateUnavailable, TitleTaken
from apps.knowledge.services import propose_article
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import (
    AlreadyGraduated,
    InvalidMemoryId,
    InvalidReScope,
    MemoryNotFound,
)
from apps.memory.models import Memory
from apps.tenancy.models import Tenant

RE_SCOPE_GLOBAL = "global"
TITLE_MAX_CHARS = 120
GRADUATION_TAG = "graduated"
CATEGORY_BY_KIND = {"decision": "decision", "preference": "pattern"}


@dataclass(frozen=True)
class GraduationResult:
    verdict: str
    created: bool
    article: Any  # apps.knowledge.models.Article
    memory: Memory


@contextmanager
def _graduation_lock(memory_id: uuid.UUID) -> Iterator[None]:
    """Serialise graduations of one memory across connections.

    A session-level advisory lock, because the novelty gate commits its own (durable)
    transaction: two concurrent first graduations queue here, and the second sees the first's
    stamp instead of racing it through the gate.
    """
    key = f"memory-graduation:{memory_id}"
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [key])
    try:
        yield
    finally:
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [key])


def parse_memory_id(memory_id: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(memory_id))
    except ValueError as exc:
        raise InvalidMemoryId("memory_id must be a UUID.") from exc


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
            tags=sorted({*memory.tags, GRADUATION_TAG}),
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
    if re_scope not in (None, RE_SCOPE_GLOBAL):
        raise InvalidReScope('re_scope must be "global" or omitted.')
    with _graduation_lock(parsed):
        memory = (
            Memory.objects.select_related("tenant", "graduated_article")
            .filter(tenant=tenant, subject_id=subject_id, pk=parsed)
            .first()
        )
        if memory is None:
            raise MemoryNotFound("Memory not found.")
        to_global = re_scope == RE_SCOPE_GLOBAL or memory.project_id is None
        if memory.graduated_at is not None:
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
        Memory.objects.filter(pk=memory.pk, graduated_at__isnull=True).update(
            graduated_at=timezone.now(),
            graduated_article=proposal.article,
            graduated_global=to_global,
        )
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


def _sweep_candidates() -> list[tuple[uuid.UUID, uuid.UUID, str]]:
    """Hot, ungraduated live memories, interleaved round-robin across tenants.

    At most ``MEMORY_GRADUATION_SCAN_LIMIT`` distinct tenants are scanned, and at most
    2 × ``MEMORY_GRADUATION_MAX_PER_RUN`` rows are read, whatever the corpus size.
    """
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            """
            WITH tenants AS (
                SELECT DISTINCT tenant_id FROM memory_memory
                 WHERE graduated_at IS NULL AND superseded_by_id IS NULL AND recall_count >= %s
                 LIMIT %s
            ), ranked AS (
                SELECT m.id, m.tenant_id, m.subject_id,
                       row_number() OVER (
                           PARTITION BY m.tenant_id ORDER BY m.recall_count DESC, m.created_at, m.id
                       ) AS turn
                  FROM memory_memory m JOIN tenants t ON t.tenant_id = m.tenant_id
                 WHERE m.graduated_at IS NULL AND m.superseded_by_id IS NULL
                   AND m.recall_count >= %s
            )
            SELECT id, tenant_id, subject_id FROM ranked
             WHERE turn <= %s
             ORDER BY turn, tenant_id
             LIMIT %s
            """,
            [
                settings.MEMORY_GRADUATION_RECALL_THRESHOLD,
                settings.MEMORY_GRADUATION_SCAN_LIMIT,
                settings.MEMORY_GRADUATION_RECALL_THRESHOLD,
                settings.MEMORY_GRADUATION_MAX_PER_RUN,
                2 * settings.MEMORY_GRADUATION_MAX_PER_RUN,
            ],
        )
        return [(row[0], row[1], row[2]) for row in cursor.fetchall()]


def memory_graduation_sweep() -> GraduationSweep:
    """Graduate hot memories (recalled ≥ threshold times), fairly across tenants, bounded.

    Never re-scopes: a project memory graduates into a project article. A fell-open gate
    stamps nothing, so the memory is retried on a later run.
    """
    result = GraduationSweep()
    tenants: dict[uuid.UUID, Tenant] = {}
    for memory_id, tenant_id, subject_id in _sweep_candidates():
        if result.graduated >= settings.MEMORY_GRADUATION_MAX_PER_RUN:
            break
        tenant = tenants.get(tenant_id) or Tenant.objects.get(pk=tenant_id)
        tenants[tenant_id] = tenant
        result.considered += 1
        try:
            graduation = memory_graduate(tenant=tenant, subject_id=subject_id, memory_id=memory_id)
        except GateUnavailable:
            result.unavailable += 1
            continue
        except (AlreadyGraduated, MemoryNotFound):
            continue  # graduated or forgotten since the scan
        result.graduated += 1
        result.verdicts[graduation.verdict] = result.verdicts.get(graduation.verdict, 0) + 1
    emit(
        "memory_graduation.sweep",
        {"considered": result.considered, "graduated": result.graduated},
        {"verdicts": result.verdicts, "unavailable": result.unavailable},
    )
    return result
