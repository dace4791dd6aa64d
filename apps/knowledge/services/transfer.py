"""Writing portable :class:`ArticleRecord`s into a tenant (``knowledge_import``).

Each record goes through :func:`article_create` (so validation, the title check and the
exact-content dedupe apply: re-importing an export is a no-op of ``duplicate`` verdicts), one
record per transaction, so one bad record never undoes the others. Links are created after
every record is in, resolving titles in the target tenant.

:func:`knowledge_restore` is the exact counterpart for ``memory_import``: same ids, timestamps
and vectors, no gate.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Value
from django.db.models.functions import Lower

from apps.core.exceptions import ApplicationError, Conflict
from apps.knowledge.exceptions import InvalidArticle
from apps.knowledge.models import Article, ArticleLink, ArticleSource, ArticleStatus
from apps.knowledge.services.articles import article_create
from apps.knowledge.services.links import article_link_create
from apps.knowledge.transfer import ArticleRecord, ArticleSnapshot, LinkSnapshot
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
            # Charged to the agent that owned it, as restored articles are; nobody's if none.
            author_subject_id=record.owner_agent_id,
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


# ----------------------------------------------------------------------------- exact restore

#: How many ids go into one ``IN (...)`` lookup.
RESTORE_LOOKUP_CHUNK = 5_000
RESTORE_BATCH_SIZE = 500
RESTORE_CLEAN_EXCLUDE = ["tenant", "project", "embedding", "search_vector"]


@dataclass(frozen=True)
class KnowledgeRestoreCounts:
    articles_created: int
    articles_skipped: int
    links_created: int
    links_skipped: int


def _chunks(values: Sequence[uuid.UUID]) -> list[list[uuid.UUID]]:
    return [
        list(values[start : start + RESTORE_LOOKUP_CHUNK])
        for start in range(0, len(values), RESTORE_LOOKUP_CHUNK)
    ]


def _article_from_snapshot(*, tenant: Tenant, snapshot: ArticleSnapshot) -> Article:
    record, state = snapshot.record, snapshot.state
    article = Article(
        id=uuid.UUID(str(record.id)),
        tenant=tenant,
        project_id=state.project_id,
        title=record.title,
        body=record.body,
        category=record.category,
        tags=list(record.tags),
        status=record.status,
        visibility=record.visibility,
        owner_agent_id=record.owner_agent_id,
        # The format does not carry the author: an article is charged to the agent owning it,
        # as migration 0005 charged the articles it found.
        author_subject_id=record.owner_agent_id,
        source=record.source,
        source_memory_id=uuid.UUID(record.source_memory_id) if record.source_memory_id else None,
        embedding=state.embedding,
        embedding_content_hash=state.embedding_content_hash,
        embedded_at=state.embedded_at,
        embedding_model=state.embedding_model if state.embedding is not None else "",
        version=state.version,
        published_at=state.published_at,
        # The export format predates the flag: what a curator created is curated again.
        curated=record.source == ArticleSource.MANUAL,
    )
    try:
        # Field-level checks only: the check constraints are the database's, and running
        # them here would cost one query per row.
        article.full_clean(
            exclude=RESTORE_CLEAN_EXCLUDE, validate_unique=False, validate_constraints=False
        )
    except DjangoValidationError as exc:
        raise InvalidArticle(
            f"Article {record.id} is invalid: {exc.messages}", details={"id": record.id}
        ) from exc
    return article


def knowledge_restore(
    *,
    tenant: Tenant,
    articles: Sequence[ArticleSnapshot],
    links: Sequence[LinkSnapshot],
) -> KnowledgeRestoreCounts:
    """Insert exported articles and links into ``tenant`` exactly as they were stored: same
    ids, timestamps, versions and vectors, without the novelty gate or re-embedding.

    A helper of ``memory_import``: call it inside the caller's transaction (it opens none).
    Idempotent: an article whose id the tenant already holds, and a link the tenant already
    has, are skipped. Raises :class:`Conflict` (nothing is written by the caller's rollback)
    when an id belongs to another tenant, or a live title is taken by a different article;
    :class:`InvalidArticle` for a link whose article is in neither the file nor the tenant.
    ``project_id``s must already be the tenant's (the caller maps or drops them).
    """
    ids = [uuid.UUID(str(snapshot.record.id)) for snapshot in articles]
    owners: dict[uuid.UUID, uuid.UUID] = {}
    for chunk in _chunks(ids):
        owners.update(Article.objects.filter(pk__in=chunk).values_list("pk", "tenant_id"))
    foreign = sorted(str(pk) for pk, owner in owners.items() if owner != tenant.pk)
    if foreign:
        raise Conflict(
            f"{len(foreign)} article id(s) in the file belong to another tenant.",
            code="id_collision",
            details={"model": "article", "ids": foreign[:20]},
        )
    fresh = [snapshot for snapshot in articles if uuid.UUID(str(snapshot.record.id)) not in owners]
    live_titles = {
        snapshot.record.title.lower(): snapshot.record.id
        for snapshot in fresh
        if snapshot.record.status != ArticleStatus.ARCHIVED
    }
    if live_titles:
        taken = sorted(
            Article.objects.filter(tenant=tenant)
            .exclude(status=ArticleStatus.ARCHIVED)
            .alias(title_lower=Lower("title"))
            .filter(title_lower__in=list(live_titles))
            .values_list("title", flat=True)
        )
        if taken:
            raise Conflict(
                f"{len(taken)} article title(s) are already used by other articles of this tenant.",
                code="title_taken",
                details={"titles": taken[:20]},
            )
    rows = [_article_from_snapshot(tenant=tenant, snapshot=snapshot) for snapshot in fresh]
    Article.objects.bulk_create(rows, batch_size=RESTORE_BATCH_SIZE)
    # bulk_create stamps created_at/updated_at with "now" (auto_now_add / auto_now);
    # bulk_update writes the attributes as given.
    for row, snapshot in zip(rows, fresh, strict=True):
        row.created_at = datetime.fromisoformat(str(snapshot.record.created_at))
        row.updated_at = snapshot.state.updated_at
    Article.objects.bulk_update(rows, ["created_at", "updated_at"], batch_size=RESTORE_BATCH_SIZE)

    known = set(ids) | set(owners)
    endpoints = {pk for link in links for pk in (link.from_article_id, link.to_article_id)}
    missing = endpoints - known
    for chunk in _chunks(sorted(missing)):
        missing -= set(
            Article.objects.filter(tenant=tenant, pk__in=chunk).values_list("pk", flat=True)
        )
    if missing:
        raise InvalidArticle(
            f"{len(missing)} linked article(s) are in neither the file nor the tenant.",
            details={"ids": sorted(str(pk) for pk in missing)[:20]},
        )
    existing_links = set(
        ArticleLink.objects.filter(tenant=tenant).values_list(
            "from_article_id", "to_article_id", "kind"
        )
    )
    new_links = [
        link
        for link in links
        if (link.from_article_id, link.to_article_id, link.kind) not in existing_links
    ]
    link_rows = [
        ArticleLink(
            tenant=tenant,
            from_article_id=link.from_article_id,
            to_article_id=link.to_article_id,
            kind=link.kind,
        )
        for link in new_links
    ]
    ArticleLink.objects.bulk_create(link_rows, batch_size=RESTORE_BATCH_SIZE)
    for link_row, link in zip(link_rows, new_links, strict=True):
        link_row.created_at, link_row.updated_at = link.created_at, link.updated_at
    ArticleLink.objects.bulk_update(
        link_rows, ["created_at", "updated_at"], batch_size=RESTORE_BATCH_SIZE
    )
    return KnowledgeRestoreCounts(
        articles_created=len(rows),
        articles_skipped=len(articles) - len(rows),
        links_created=len(link_rows),
        links_skipped=len(links) - len(link_rows),
    )
