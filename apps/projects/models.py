from __future__ import annotations

import uuid

from django.db import models
from django.db.models import Q
from typing_extensions import override

from apps.tenancy.models import TenantScopedModel

NAME_MAX_LENGTH = 200
SLUG_MAX_LENGTH = 100
REPO_URL_MAX_LENGTH = 500


class ProjectStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    ARCHIVED = "archived", "Archived"


class Project(TenantScopedModel):
    """A tenant's project: the partition key memories and articles may be filed under.

    ``repo_url`` and ``repo_path`` are stored normalised (see ``apps.projects.repo_urls``);
    only the services write them, so the two always agree.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    # No index of its own: the (tenant, slug) unique constraint serves every slug lookup.
    slug = models.SlugField(max_length=SLUG_MAX_LENGTH, db_index=False)
    # Normalised "host/owner/repo", or bare "owner/repo" when registered without a host;
    # blank when the project has no repository.
    repo_url = models.CharField(max_length=REPO_URL_MAX_LENGTH, blank=True, default="")
    # The path part of repo_url ("owner/repo"). A bare owner/repo lookup matches on it, so it
    # is a column with an index rather than a suffix match on repo_url (which would let
    # "sub/repo" match "gitlab.com/group/sub/repo").
    repo_path = models.CharField(max_length=REPO_URL_MAX_LENGTH, blank=True, default="")
    status = models.CharField(
        max_length=16, choices=ProjectStatus.choices, default=ProjectStatus.ACTIVE
    )

    class Meta:
        # Tuples, not lists: Meta options are never mutated (ruff RUF012).
        ordering = ("name", "id")
        constraints = (
            # Archived projects keep their slug: ids and slugs in old references stay unique.
            models.UniqueConstraint(
                fields=["tenant", "slug"], name="project_slug_unique_per_tenant"
            ),
            models.CheckConstraint(
                condition=Q(status__in=ProjectStatus.values), name="project_status_valid"
            ),
            models.CheckConstraint(condition=~Q(name=""), name="project_name_not_blank"),
        )
        indexes = (
            # List (filtered by status, ordered by name) and resolve-by-name within a tenant.
            models.Index(fields=["tenant", "status", "name"], name="project_tenant_status_idx"),
            # resolve_project by repo_url: every form narrows on repo_path first.
            models.Index(fields=["tenant", "repo_path"], name="project_tenant_repo_path_idx"),
        )

    @override
    def __str__(self) -> str:
        return self.slug
