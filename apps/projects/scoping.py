"""The project partition every project-aware read shares (spec "Project scope")."""

from __future__ import annotations

import uuid

from django.db.models import Q


def project_partition(*, project_id: uuid.UUID | None) -> Q:
    """Global ∪ active project, for any model with a nullable ``project`` foreign key.

    Absent → the global (tenant-wide) bucket only; present → global plus that project's rows.
    A stale or foreign project id reads as an empty partition: the caller's tenant (and
    subject) predicate still bounds every row.
    """
    if project_id is None:
        return Q(project__isnull=True)
    return Q(project__isnull=True) | Q(project_id=project_id)
