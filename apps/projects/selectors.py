"""Reads of projects (STYLE rule 5). Every selector takes ``tenant=`` first and fails closed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import QuerySet

from apps.projects.exceptions import AmbiguousResolution, NoIdentifier, ProjectNotFound
from apps.projects.models import Project, ProjectStatus
from apps.projects.repo_urls import normalize_repo_url
from apps.tenancy.models import Tenant

#: How many of the competing projects an ``ambiguous_resolution`` error lists.
AMBIGUOUS_CANDIDATES_SHOWN = 10


@dataclass(frozen=True)
class ProjectPage:
    items: list[Project]
    total_count: int
    limit: int
    offset: int


def _parse_project_id(project_id: uuid.UUID | str) -> uuid.UUID | None:
    if isinstance(project_id, uuid.UUID):
        return project_id
    try:
        return uuid.UUID(str(project_id).strip())
    except ValueError:
        return None


def project_list(*, tenant: Tenant, status: str | None = None) -> QuerySet[Project]:
    """The tenant's projects ordered by name; ``status`` narrows to active or archived."""
    queryset = Project.objects.for_tenant(tenant)
    if status:
        queryset = queryset.filter(status=status)
    return queryset.order_by("name", "id")


def project_list_page(
    *, tenant: Tenant, status: str | None = None, limit: int, offset: int
) -> ProjectPage:
    """One page of :func:`project_list` plus the unpaginated total (two queries)."""
    queryset = project_list(tenant=tenant, status=status)
    return ProjectPage(
        items=list(queryset[offset : offset + limit]),
        total_count=queryset.count(),
        limit=limit,
        offset=offset,
    )


def project_get(
    *, tenant: Tenant, project_id: uuid.UUID | str, for_update: bool = False
) -> Project:
    """The tenant's project with this id, whatever its status.

    A malformed id, a missing id and another tenant's id all raise the same
    ``ProjectNotFound`` (404 ``not_found``), so callers cannot probe other tenants.
    ``for_update`` row-locks it; only services inside a transaction pass it.
    """
    parsed = _parse_project_id(project_id)
    project: Project | None = None
    if parsed is not None:
        queryset = Project.objects.for_tenant(tenant).filter(id=parsed)
        if for_update:
            queryset = queryset.select_for_update()
        project = queryset.first()
    if project is None:
        raise ProjectNotFound("Project not found.")
    return project


def project_exists(
    *, tenant: Tenant, project_id: uuid.UUID | str, include_archived: bool = True
) -> bool:
    """Whether ``project_id`` names a project of ``tenant``; for other apps' write validation.

    Malformed ids and other tenants' ids are simply ``False``; raising the right error
    (e.g. 422 ``invalid_project_id``) is the caller's business. Archived projects count by
    default because archiving hides a project from resolution, not from the rows filed
    under it.
    """
    parsed = _parse_project_id(project_id)
    if parsed is None:
        return False
    queryset = Project.objects.for_tenant(tenant).filter(id=parsed)
    if not include_archived:
        queryset = queryset.filter(status=ProjectStatus.ACTIVE)
    return bool(queryset.exists())


def _single_match(queryset: QuerySet[Project], *, identifier: str, value: str) -> Project:
    matches = list(queryset.order_by("name", "id")[: AMBIGUOUS_CANDIDATES_SHOWN + 1])
    if not matches:
        raise ProjectNotFound(f"No active project matches this {identifier}.")
    if len(matches) > 1:
        raise AmbiguousResolution(
            f"This {identifier} matches more than one active project; resolve by slug instead.",
            details={
                "identifier": identifier,
                "value": value,
                "candidates": [
                    {"id": str(match.id), "slug": match.slug, "name": match.name}
                    for match in matches[:AMBIGUOUS_CANDIDATES_SHOWN]
                ],
            },
        )
    return matches[0]


def resolve_project(
    *,
    tenant: Tenant,
    slug: str | None = None,
    repo_url: str | None = None,
    name: str | None = None,
) -> Project:
    """Map what an agent knows (slug, repository or name) to one active project.

    Precedence is slug > repo_url > name: the first identifier that is present (blank counts
    as absent) is the only one consulted, and a miss on it is a miss, never a fall-through.
    Archived projects and other tenants' projects are never resolved.

    * ``slug`` is exact (slugs are stored lowercase, so the input is lowercased).
    * ``repo_url`` is normalised first (``apps.projects.repo_urls``). A URL with a host
      matches projects registered with that exact host and path, and projects registered
      with a bare ``owner/repo`` (their host is unknown, so any host's copy is theirs). A bare
      ``owner/repo`` matches on the path alone, whatever host the project was registered with.
    * ``name`` matches case-insensitively.

    Raises ``NoIdentifier`` (422) when no identifier is present, ``InvalidRepoUrl`` (422) for
    an unparseable repo_url, ``ProjectNotFound`` (404) when nothing matches and
    ``AmbiguousResolution`` (409) when repo_url or name matches several active projects.
    """
    slug = (slug or "").strip()
    repo_url = (repo_url or "").strip()
    name = (name or "").strip()
    active = Project.objects.for_tenant(tenant).filter(status=ProjectStatus.ACTIVE)
    if slug:
        # (tenant, slug) is unique, so a slug can never be ambiguous.
        project = active.filter(slug=slug.lower()).first()
        if project is None:
            raise ProjectNotFound("No active project matches this slug.")
        return project
    if repo_url:
        ref = normalize_repo_url(repo_url)
        candidates = active.filter(repo_path=ref.path)
        if ref.host:
            candidates = candidates.filter(repo_url__in=[ref.canonical, ref.path])
        return _single_match(candidates, identifier="repo_url", value=repo_url)
    if name:
        return _single_match(active.filter(name__iexact=name), identifier="name", value=name)
    raise NoIdentifier("Supply one of slug, repo_url or name to resolve a project.")
