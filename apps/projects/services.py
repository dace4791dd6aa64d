"""Writes to projects (STYLE rule 3). Each service is a top-level use case with its own
durable transaction; slug uniqueness is left to the database constraint (no check-then-act).
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager

from django.utils.text import slugify

from apps.core.db.constraints import raise_on_violation
from apps.core.db.erasure import erase_rows
from apps.core.db.transactions import write_transaction
from apps.projects.exceptions import InvalidSlug, ProjectSlugTaken
from apps.projects.models import SLUG_MAX_LENGTH, Project, ProjectStatus
from apps.projects.repo_urls import normalize_repo_url
from apps.projects.selectors import project_get
from apps.tenancy.models import Tenant

SLUG_CONSTRAINT = "project_slug_unique_per_tenant"
# Fields full_clean() must not validate: checking the tenant FK costs a query for a tenant we
# already hold, and excluding it also skips the (tenant, slug) UniqueConstraint, whose check
# would be a racy pre-query. The insert/update itself enforces uniqueness (see
# _slug_violation_as_taken).
CLEAN_EXCLUDE = ["tenant"]


def _slug_for(*, slug: str | None, name: str) -> str:
    explicit = (slug or "").strip().lower()
    if explicit:
        return explicit
    derived = slugify(name)[:SLUG_MAX_LENGTH].strip("-")
    if not derived:
        raise InvalidSlug(
            "No slug can be derived from this name; supply a slug.", details={"name": name}
        )
    return derived


def _set_repo_url(project: Project, repo_url: str) -> None:
    if not repo_url.strip():
        project.repo_url = ""
        project.repo_path = ""
        return
    ref = normalize_repo_url(repo_url)
    project.repo_url = ref.canonical
    project.repo_path = ref.path


def _slug_violation_as_taken(project: Project) -> AbstractContextManager[None]:
    """Answer a write the slug constraint refused with ``ProjectSlugTaken`` (409)."""
    return raise_on_violation(
        {SLUG_CONSTRAINT},
        lambda: ProjectSlugTaken(
            f"A project with slug {project.slug!r} already exists in this tenant.",
            details={"slug": project.slug},
        ),
    )


def project_create(
    *, tenant: Tenant, name: str, slug: str | None = None, repo_url: str | None = None
) -> Project:
    """Create an active project. ``slug`` defaults to ``slugify(name)``; ``repo_url`` is
    stored normalised. Raises ``ProjectSlugTaken`` (409) if the tenant already uses the slug,
    archived projects included.
    """
    project = Project(tenant=tenant, name=name.strip(), slug=_slug_for(slug=slug, name=name))
    _set_repo_url(project, repo_url or "")
    project.full_clean(exclude=CLEAN_EXCLUDE, validate_unique=False)
    with _slug_violation_as_taken(project), write_transaction():
        project.save(force_insert=True)
    return project


def project_update(
    *,
    tenant: Tenant,
    project_id: uuid.UUID | str,
    name: str | None = None,
    slug: str | None = None,
    repo_url: str | None = None,
    status: str | None = None,
) -> Project:
    """Change some of a project's fields; ``None`` leaves a field as it is.

    ``repo_url=""`` removes the repository; ``slug=""`` re-derives the slug from the name.
    ``status`` may archive or restore the project.
    Raises ``ProjectNotFound`` (404) for a missing or foreign id and ``ProjectSlugTaken``
    (409) for a slug already in use.
    """
    changed: list[str] = []
    with write_transaction():
        project = project_get(tenant=tenant, project_id=project_id, for_update=True)
        if name is not None:
            project.name = name.strip()
            changed.append("name")
        if slug is not None:
            project.slug = _slug_for(slug=slug, name=project.name)
            changed.append("slug")
        if repo_url is not None:
            _set_repo_url(project, repo_url)
            changed.extend(["repo_url", "repo_path"])
        if status is not None:
            project.status = status
            changed.append("status")
        if changed:
            project.full_clean(exclude=CLEAN_EXCLUDE, validate_unique=False)
            with _slug_violation_as_taken(project):
                project.save(update_fields=[*changed, "updated_at"])
    return project


def project_archive(*, tenant: Tenant, project_id: uuid.UUID | str) -> Project:
    """Archive a project (idempotent). Archived projects are listed and fetchable by id, and
    rows filed under them keep their project_id, but ``resolve_project`` no longer finds them.
    """
    with write_transaction():
        project = project_get(tenant=tenant, project_id=project_id, for_update=True)
        if project.status != ProjectStatus.ARCHIVED:
            project.status = ProjectStatus.ARCHIVED
            project.save(update_fields=["status", "updated_at"])
    return project


def project_erase_all(*, tenant: Tenant, dry_run: bool) -> int:
    """Delete (or count) every project of ``tenant``: tenant erasure, after the memories and
    articles that reference them are gone (helper, inside the erasure's transaction)."""
    return erase_rows(Project.objects.filter(tenant=tenant), dry_run=dry_run)
