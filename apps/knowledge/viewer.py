"""Who is looking at the wiki, and what that viewer may see.

Visibility is decided in exactly one place, :func:`visible_q`, and every read and every gate
check filters through it:

* an **agent** viewer sees published, tenant-visible articles, plus every non-archived
  article it owns (``owner_agent_id == subject_id``): its own drafts and its own
  owner-visible articles. Never another agent's drafts or owner-visible articles, and never
  anything archived.
* a **user / orchestrator / superadmin** viewer sees every non-archived article of the tenant;
  archived ones only when a caller asks for them explicitly (``include_archived``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from apps.knowledge.models import ArticleStatus, ArticleVisibility
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.scope import RequestScope


@dataclass(frozen=True)
class Viewer:
    role: str
    subject_id: str

    @classmethod
    def from_scope(cls, scope: RequestScope) -> Viewer:
        """The viewer an authenticated request acts as (its key's role and derived subject)."""
        return cls(role=scope.role, subject_id=scope.subject_id)

    @classmethod
    def for_subject(cls, subject_id: str) -> Viewer:
        """An agent-role viewer for ``subject_id``, for background work acting as an agent
        (e.g. the graduation sweep proposing an agent's memory to the gate)."""
        return cls(role=ApiKeyRole.AGENT, subject_id=subject_id)

    @property
    def is_agent(self) -> bool:
        return self.role == ApiKeyRole.AGENT

    @property
    def can_curate(self) -> bool:
        """May publish, and may edit or archive articles it does not own."""
        return not self.is_agent


def visible_q(viewer: Viewer, *, include_archived: bool = False) -> Q:
    """The rows of a tenant's articles that ``viewer`` may see (tenant filter not included)."""
    if viewer.is_agent:
        shared = Q(status=ArticleStatus.PUBLISHED, visibility=ArticleVisibility.TENANT)
        own = Q(owner_agent_id=viewer.subject_id) & ~Q(status=ArticleStatus.ARCHIVED)
        # A blank subject would otherwise "own" every unowned article.
        return shared | own if viewer.subject_id else shared
    if include_archived:
        return Q()
    return ~Q(status=ArticleStatus.ARCHIVED)


def can_edit(viewer: Viewer, *, owner_agent_id: str) -> bool:
    """Agents edit only their own articles; curators edit any article they can see."""
    return viewer.can_curate or (bool(viewer.subject_id) and owner_agent_id == viewer.subject_id)
