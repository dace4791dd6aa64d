"""Writing a ``memory_export`` file into a tenant (``memory_import``): exact and idempotent.

Everything happens in one transaction: a bad line, an id that belongs to another tenant, a
missing project or any constraint the database refuses rolls the whole import back. Rows are
matched on their ids (memories, articles), on their natural key (links, watermarks) or on
their content (session turns, which have no global id), and a match is skipped, never
updated: importing the same file twice creates nothing the second time.

The live-row quota is not enforced (a restore must not drop rows), and vectors are stored as
exported (no provider is called). Rows exported without a vector stay pending and the beat
backfill embeds them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.db.models.functions import MD5
from django.utils import timezone

from apps.core.db.transactions import write_transaction
from apps.dataops.exceptions import (
    DimensionMismatch,
    ExportFileInvalid,
    IdCollision,
    ImportConflict,
    MissingProjects,
)
from apps.dataops.export_format import (
    RECORD_TYPES,
    ParsedExport,
    ParsedTurn,
    RecordType,
)
from apps.knowledge.models import ArticleStatus
from apps.knowledge.selectors import article_ids_in_tenant
from apps.knowledge.services import knowledge_restore, lock_tenant_article_counts
from apps.knowledge.transfer import ArticleSnapshot
from apps.memory.models import Memory, MemorySource, SessionMemory, SessionPromotion
from apps.memory.services import memory_restore
from apps.projects.selectors import project_list
from apps.tenancy.models import Tenant

LOOKUP_CHUNK = 5_000
WRITE_BATCH_SIZE = 500
#: How many offending ids an error lists.
ERROR_IDS_SHOWN = 20


@dataclass
class TransferImportReport:
    source_tenant: str
    #: record type → {"created": n, "skipped": n}
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {str(t): {"created": 0, "skipped": 0} for t in RECORD_TYPES}
    )
    expired_turns_skipped: int = 0
    #: Exported project id → the target tenant's project id with the same slug.
    projects_remapped: dict[str, str] = field(default_factory=dict)
    #: Exported project ids the target lacks, imported as global (--drop-missing-projects).
    projects_dropped: list[str] = field(default_factory=list)
    #: Memories whose graduated article is in neither the file nor the tenant: they keep
    #: graduated_at / graduated_global and lose the link (as when an article is deleted).
    graduated_articles_unlinked: int = 0
    embeddings_dropped: bool = False
    #: Created memories and articles without a vector (the backfill embeds them).
    pending_embeddings: int = 0

    def add(self, record_type: str, *, created: int, skipped: int) -> None:
        self.counts[record_type]["created"] += created
        self.counts[record_type]["skipped"] += skipped

    @property
    def created(self) -> int:
        return sum(count["created"] for count in self.counts.values())


def _chunks(values: Sequence[Any]) -> list[list[Any]]:
    return [
        list(values[start : start + LOOKUP_CHUNK]) for start in range(0, len(values), LOOKUP_CHUNK)
    ]


def _project_mapping(
    *, tenant: Tenant, export: ParsedExport, drop_missing: bool, report: TransferImportReport
) -> dict[uuid.UUID, uuid.UUID | None]:
    """Exported project id → target project id: the same id, else the tenant's project with
    the exported slug, else (with ``drop_missing``) None, i.e. tenant-wide."""
    referenced = {
        parsed.memory.project_id for parsed in export.memories if parsed.memory.project_id
    } | {
        parsed.snapshot.state.project_id
        for parsed in export.articles
        if parsed.snapshot.state.project_id
    }
    if not referenced:
        return {}
    projects = list(project_list(tenant=tenant))
    by_id = {project.pk for project in projects}
    by_slug = {project.slug: project.pk for project in projects}
    mapping: dict[uuid.UUID, uuid.UUID | None] = {}
    missing: list[uuid.UUID] = []
    for project_id in sorted(referenced, key=str):
        slug = export.header.projects.get(str(project_id))
        if project_id in by_id:
            mapping[project_id] = project_id
        elif slug is not None and slug in by_slug:
            mapping[project_id] = by_slug[slug]
            report.projects_remapped[str(project_id)] = str(by_slug[slug])
        else:
            missing.append(project_id)
    if missing and not drop_missing:
        listed = [{"id": str(pid), "slug": export.header.projects.get(str(pid))} for pid in missing]
        raise MissingProjects(
            f"The tenant has no project for {len(missing)} referenced project(s) (matched by id, "
            "then by slug): "
            + ", ".join(f"{item['id']} ({item['slug'] or 'unknown slug'})" for item in listed)
            + ". Create them (same slug), or pass --drop-missing-projects to import those rows "
            "as tenant-wide.",
            details={"projects": listed},
        )
    for project_id in missing:
        mapping[project_id] = None
        report.projects_dropped.append(str(project_id))
    return mapping


def _check_memories(*, tenant: Tenant, export: ParsedExport) -> set[uuid.UUID]:
    """Refuse ids of other tenants, dangling or cross-subject superseded_by links and
    promoted-content duplicates. Returns the file's memory ids the tenant already holds."""
    file_ids = [parsed.memory.pk for parsed in export.memories]
    owners: dict[uuid.UUID, uuid.UUID] = {}
    for chunk in _chunks(file_ids):
        owners.update(Memory.objects.filter(pk__in=chunk).values_list("pk", "tenant_id"))
    foreign = sorted(str(pk) for pk, owner in owners.items() if owner != tenant.pk)
    if foreign:
        raise IdCollision(
            f"{len(foreign)} memory id(s) in the file belong to another tenant; an export "
            "can only go into another tenant once its ids are free there.",
            details={"model": "memory", "ids": foreign[:ERROR_IDS_SHOWN]},
        )
    existing = set(owners)
    known = set(file_ids)
    dangling = {
        target: parsed.line
        for parsed in export.memories
        for _field, target in _links(parsed.memory)
        if target not in known
    }
    subject_of = {parsed.memory.pk: parsed.memory.subject_id for parsed in export.memories}
    for chunk in _chunks(sorted(dangling, key=str)):
        subject_of.update(
            Memory.objects.filter(tenant=tenant, pk__in=chunk).values_list("pk", "subject_id")
        )
    for row in export.memories:
        for name, target in _links(row.memory):
            if target not in subject_of:
                raise ExportFileInvalid(
                    row.line, f"{name} {target} is in neither the file nor the tenant"
                )
            # A version chain belongs to one subject: forget follows it, so a link across
            # subjects would let one subject's forget reach another's rows; a conflict or a
            # replaced row of another subject would name what its subject may not see.
            if subject_of[target] != row.memory.subject_id:
                raise ExportFileInvalid(
                    row.line,
                    f"{name} {target} belongs to another subject than memory "
                    f"{row.memory.pk}; a memory can only be linked within its subject",
                )
    promoted = {
        (parsed.memory.subject_id, parsed.memory.embedding_content_hash): parsed
        for parsed in export.memories
        if parsed.memory.source == MemorySource.PROMOTED and parsed.memory.pk not in existing
    }
    if promoted:
        hashes = sorted({content_hash for _, content_hash in promoted})
        for chunk in _chunks(hashes):
            clashes = Memory.objects.filter(
                tenant=tenant, source=MemorySource.PROMOTED, embedding_content_hash__in=chunk
            ).values_list("pk", "subject_id", "embedding_content_hash")
            for pk, subject_id, content_hash in clashes:
                parsed = promoted.get((subject_id, content_hash))
                if parsed is not None and parsed.memory.pk != pk:
                    raise ExportFileInvalid(
                        parsed.line,
                        f"promoted memory {parsed.memory.pk} repeats the text of {pk}, which "
                        "the tenant already holds (promoted facts are stored once per subject)",
                    )
    return existing


def _links(memory: Memory) -> list[tuple[str, uuid.UUID]]:
    """The other memories a memory names: its successor, the rows it replaced, its conflicts."""
    links = [("supersedes", pk) for pk in memory.supersedes]
    links += [("conflicts_with", pk) for pk in memory.conflicts_with]
    if memory.superseded_by_id is not None:
        links.insert(0, ("superseded_by", memory.superseded_by_id))
    return links


def _article_id(snapshot: ArticleSnapshot) -> uuid.UUID:
    return uuid.UUID(str(snapshot.record.id))


def _import_articles(
    *,
    tenant: Tenant,
    export: ParsedExport,
    projects: dict[uuid.UUID, uuid.UUID | None],
    drop_embeddings: bool,
    report: TransferImportReport,
) -> None:
    snapshots: list[ArticleSnapshot] = []
    for parsed in export.articles:
        state = parsed.snapshot.state
        if state.project_id is not None:
            state = dataclasses.replace(state, project_id=projects[state.project_id])
        if drop_embeddings:
            state = dataclasses.replace(state, embedding=None, embedded_at=None, embedding_model="")
        snapshots.append(dataclasses.replace(parsed.snapshot, state=state))
    before = (
        article_ids_in_tenant(tenant=tenant, ids=[_article_id(s) for s in snapshots])
        if snapshots
        else set()
    )
    counts = knowledge_restore(
        tenant=tenant, articles=snapshots, links=[parsed.link for parsed in export.links]
    )
    report.add(RecordType.ARTICLE, created=counts.articles_created, skipped=counts.articles_skipped)
    report.add(RecordType.ARTICLE_LINK, created=counts.links_created, skipped=counts.links_skipped)
    report.pending_embeddings += sum(
        1
        for s in snapshots
        if s.state.embedding is None
        and s.record.status != ArticleStatus.ARCHIVED
        and _article_id(s) not in before
    )


def _import_memories(
    *,
    tenant: Tenant,
    export: ParsedExport,
    existing: set[uuid.UUID],
    projects: dict[uuid.UUID, uuid.UUID | None],
    seqs: dict[int, int],
    drop_embeddings: bool,
    report: TransferImportReport,
) -> None:
    """Restore the file's memories the tenant lacks. ``seqs`` maps exported turn seqs to the
    imported turns' new ones: promoted memories point at their turns again. A seq whose turn
    is not in the file keeps its exported value (the turn was pruned, or lives elsewhere)."""
    fresh = [parsed.memory for parsed in export.memories if parsed.memory.pk not in existing]
    graduated = {m.graduated_article_id for m in fresh if m.graduated_article_id is not None}
    articles = article_ids_in_tenant(tenant=tenant, ids=graduated) if graduated else set()
    for memory in fresh:
        if memory.project_id is not None:
            memory.project_id = projects[memory.project_id]
        if memory.graduated_article_id is not None and memory.graduated_article_id not in articles:
            memory.graduated_article_id = None
            report.graduated_articles_unlinked += 1
        if drop_embeddings:
            memory.embedding = None
            memory.embedded_at = None
            memory.embedding_model = ""
        memory.source_turn_seqs = [seqs.get(seq, seq) for seq in memory.source_turn_seqs]
    memory_restore(tenant=tenant, memories=fresh)
    report.add(RecordType.MEMORY, created=len(fresh), skipped=len(export.memories) - len(fresh))
    report.pending_embeddings += sum(1 for memory in fresh if memory.embedding is None)


def _content_digest(content: str) -> str:
    """The same digest as Postgres' built-in md5(text): a match key, not a security hash."""
    return hashlib.md5(content.encode("utf-8"), usedforsecurity=False).hexdigest()


def _import_turns(
    *, tenant: Tenant, turns: list[ParsedTurn], now: datetime, report: TransferImportReport
) -> dict[int, int]:
    """Turns have no global id: one already in the tenant is recognised by (subject, session,
    role, created_at, content). New seq values are assigned in the exported seq order.
    Returns exported seq → new seq for the turns created."""
    live = [parsed for parsed in sorted(turns, key=lambda p: p.seq) if parsed.turn.expires_at > now]
    report.expired_turns_skipped += len(turns) - len(live)
    sessions = sorted({parsed.turn.session_id for parsed in live})
    present: Counter[tuple[str, str, str, datetime, str]] = Counter()
    for chunk in _chunks(sessions):
        present.update(
            SessionMemory.objects.filter(tenant=tenant, session_id__in=chunk)
            .annotate(content_hash=MD5("content"))
            .values_list("subject_id", "session_id", "role", "created_at", "content_hash")
        )
    fresh: list[ParsedTurn] = []
    for parsed in live:
        turn = parsed.turn
        key = (
            turn.subject_id,
            turn.session_id,
            turn.role,
            turn.created_at,
            _content_digest(turn.content),
        )
        if present[key]:
            present[key] -= 1
            continue
        fresh.append(parsed)
    rows = []
    for parsed in fresh:
        parsed.turn.tenant = tenant
        rows.append(parsed.turn)
    stamps = [(turn.created_at, turn.updated_at) for turn in rows]
    # One INSERT per batch, batches in order: Postgres assigns seq in list order.
    SessionMemory.objects.bulk_create(rows, batch_size=WRITE_BATCH_SIZE)
    for turn, (created_at, updated_at) in zip(rows, stamps, strict=True):
        turn.created_at, turn.updated_at = created_at, updated_at
    SessionMemory.objects.bulk_update(
        rows, ["created_at", "updated_at"], batch_size=WRITE_BATCH_SIZE
    )
    report.add(RecordType.SESSION_TURN, created=len(rows), skipped=len(live) - len(rows))
    return {parsed.seq: parsed.turn.seq for parsed in fresh}


def _import_watermarks(
    *, tenant: Tenant, export: ParsedExport, report: TransferImportReport
) -> None:
    sessions = sorted({parsed.watermark.session_id for parsed in export.watermarks})
    present: set[tuple[str, str]] = set()
    for chunk in _chunks(sessions):
        present.update(
            SessionPromotion.objects.filter(tenant=tenant, session_id__in=chunk).values_list(
                "subject_id", "session_id"
            )
        )
    rows = [
        parsed.watermark
        for parsed in export.watermarks
        if (parsed.watermark.subject_id, parsed.watermark.session_id) not in present
    ]
    stamps = [(row.created_at, row.updated_at) for row in rows]
    for row in rows:
        row.tenant = tenant
    SessionPromotion.objects.bulk_create(rows, batch_size=WRITE_BATCH_SIZE)
    for row, (created_at, updated_at) in zip(rows, stamps, strict=True):
        row.created_at, row.updated_at = created_at, updated_at
    SessionPromotion.objects.bulk_update(
        rows, ["created_at", "updated_at"], batch_size=WRITE_BATCH_SIZE
    )
    report.add(
        RecordType.SESSION_PROMOTION,
        created=len(rows),
        skipped=len(export.watermarks) - len(rows),
    )


def memory_import(
    *,
    tenant: Tenant,
    export: ParsedExport,
    drop_missing_projects: bool = False,
    drop_embeddings: bool = False,
    on_progress: Callable[[str, int], None] | None = None,
) -> TransferImportReport:
    """Import a parsed export into ``tenant`` (any tenant: the caller names it explicitly).

    All-or-nothing in one transaction; see the module docstring for matching and skipping.
    Raises :class:`DimensionMismatch` when the file's vectors do not fit this deployment
    (unless ``drop_embeddings``: rows then import pending and are embedded afresh),
    :class:`MissingProjects`, :class:`IdCollision` (an id belongs to another tenant),
    :class:`ExportFileInvalid` naming the line of an inconsistent record, and
    :class:`ImportConflict` for any other constraint the database refuses.
    """
    header = export.header
    if header.embedding_dimensions != settings.EMBEDDING_DIMENSIONS and not drop_embeddings:
        raise DimensionMismatch(
            f"The file holds {header.embedding_dimensions}-dimensional vectors; this "
            f"deployment stores {settings.EMBEDDING_DIMENSIONS} (EMBEDDING_DIMENSIONS). Pass "
            "--drop-embeddings to import without vectors and let them be embedded here.",
            details={
                "file": header.embedding_dimensions,
                "deployment": settings.EMBEDDING_DIMENSIONS,
            },
        )
    report = TransferImportReport(source_tenant=header.tenant, embeddings_dropped=drop_embeddings)

    def progress(record_type: RecordType, count: int) -> None:
        if on_progress is not None and count:
            on_progress(str(record_type), count)

    try:
        with write_transaction():
            # Before any row, as every writer of the tenant's article counts takes them.
            lock_tenant_article_counts(tenant=tenant)
            existing = _check_memories(tenant=tenant, export=export)
            projects = _project_mapping(
                tenant=tenant, export=export, drop_missing=drop_missing_projects, report=report
            )
            _import_articles(
                tenant=tenant,
                export=export,
                projects=projects,
                drop_embeddings=drop_embeddings,
                report=report,
            )
            progress(RecordType.ARTICLE, len(export.articles))
            progress(RecordType.ARTICLE_LINK, len(export.links))
            # Turns first: the promoted memories restored next point at their new seqs.
            seqs = _import_turns(
                tenant=tenant, turns=export.turns, now=timezone.now(), report=report
            )
            progress(RecordType.SESSION_TURN, len(export.turns))
            _import_memories(
                tenant=tenant,
                export=export,
                existing=existing,
                projects=projects,
                seqs=seqs,
                drop_embeddings=drop_embeddings,
                report=report,
            )
            progress(RecordType.MEMORY, len(export.memories))
            _import_watermarks(tenant=tenant, export=export, report=report)
            progress(RecordType.SESSION_PROMOTION, len(export.watermarks))
    except IntegrityError as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ImportConflict(f"The database refused the import: {detail}") from exc
    return report
