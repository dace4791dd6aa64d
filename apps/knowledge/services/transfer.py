"""Writing portable :class:`ArticleRecord`s into a tenant (``knowledge_import``).

Each record goes through :func:`article_create` (so validation, the title check and the
exact-content dedupe apply: re-importing an export is a no-op of ``duplicate`` verdicts), one
record per transaction, so one bad record never undoes the others. Links are created after
every record is in, resolving titles in the target tenant.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.db.models import Value
from django.db.models.functions import Lower

from apps.core.exceptions import ApplicationError
from apps.knowledge.models import Article, ArticleStatus
from apps.knowledge.services.articles import article_create
from apps.knowledge.services.links import article_link_create
from apps.knowledge.transfer import ArticleRecord
from apps.knowledge.viewer import Viewer
from apps.projects.selectors import project_list
from apps.tenancy.models import ApiKeyRole, Tenant

#: Imports act as a curator: they may create any status and any visibility.
IMPORT_VIEWER = Viewer(role=ApiKeyRole.USER, subject_id="knowledge_import")

IMPORTED = "created"
DUPLICATE = "duplicate"
FAILED = "failed"


@dataclass(frozen=True)
class ImportOutcome:
    title: str
    verdict: str
    article_id: uuid.UUID | None = None
    error: str = ""


@dataclass
class ImportReport:
    outcomes: list[ImportOutcome] = field(default_factory=list)
    links_applied: int = 0
    links_skipped: int = 0

    @property
    def counts(self) -> dict[str, int]:
        counts = Counter(outcome.verdict for outcome in self.outcomes)
        return {verdict: counts.get(verdict, 0) for verdict in (IMPORTED, DUPLICATE, FAILED)}

    @property
    def created_ids(self) -> list[uuid.UUID]:
        return [o.article_id for o in self.outcomes if o.verdict == IMPORTED and o.article_id]


def _import_one(
    *, tenant: Tenant, record: ArticleRecord, projects: dict[str, uuid.UUID]
) -> ImportOutcome:
    project_id = None
    if record.project:
        if record.project not in projects:
            return ImportOutcome(
                title=record.title,
                verdict=FAILED,
                error=f"invalid_project: no project with slug {record.project!r}",
            )
        project_id = projects[record.project]
    try:
        source_memory_id = uuid.UUID(record.source_memory_id) if record.source_memory_id else None
        proposal = article_create(
            tenant=tenant,
            viewer=IMPORT_VIEWER,
            title=record.title,
            body=record.body,
            category=record.category,
            tags=record.tags,
            project_id=project_id,
            status=record.status,
            visibility=record.visibility,
            owner_agent_id=record.owner_agent_id,
            source=record.source,
            source_memory_id=source_memory_id,
        )
    except ValueError:
        return ImportOutcome(
            title=record.title, verdict=FAILED, error="invalid_article: bad source_memory_id"
        )
    except ApplicationError as exc:
        return ImportOutcome(title=record.title, verdict=FAILED, error=f"{exc.code}: {exc.message}")
    return ImportOutcome(
        title=record.title, verdict=proposal.verdict, article_id=proposal.article.pk
    )


def _by_title(*, tenant: Tenant, title: str) -> Article | None:
    return (
        Article.objects.filter(tenant=tenant)
        .exclude(status=ArticleStatus.ARCHIVED)
        .alias(title_lower=Lower("title"))
        .filter(title_lower=Lower(Value(title)))
        .only("pk")
        .first()
    )


def knowledge_import(
    *,
    tenant: Tenant,
    records: Sequence[ArticleRecord],
    on_progress: Callable[[ImportOutcome], None] | None = None,
) -> ImportReport:
    """Import ``records`` into ``tenant``; see the module docstring. Never raises for a bad
    record: its outcome is ``failed`` with the error code and message."""
    report = ImportReport()
    projects = {project.slug: project.pk for project in project_list(tenant=tenant)}
    for record in records:
        outcome = _import_one(tenant=tenant, record=record, projects=projects)
        report.outcomes.append(outcome)
        if on_progress is not None:
            on_progress(outcome)
    for record in records:
        if not record.links:
            continue
        source = _by_title(tenant=tenant, title=record.title)
        for link in record.links:
            target = _by_title(tenant=tenant, title=link.to)
            if source is None or target is None:
                report.links_skipped += 1
                continue
            try:
                article_link_create(
                    tenant=tenant,
                    viewer=IMPORT_VIEWER,
                    from_article_id=source.pk,
                    to_article_id=target.pk,
                    kind=link.kind,
                )
            except ApplicationError:
                report.links_skipped += 1
                continue
            report.links_applied += 1
    return report
