from __future__ import annotations

import uuid

from django.db.models import Q


def project_partition(*, project_id: uuid.UUID | None) -> Q:
    """Global ∪ active project (spec "Project scope").

    Absent → the global bucket only; present → global plus that project. A stale or foreign
    project id reads as an empty partition: the (tenant, subject) predicate still bounds rows.
    """
    if project_id is None:
        return Q(project__isnull=True)
    return Q(project__isnull=True) | Q(project_id=project_id)
