"""Exact expected shapes for project API assertions."""

from __future__ import annotations

from typing import Any

from rest_framework.fields import DateTimeField

from apps.projects.models import Project

LIST_URL = "/api/v1/projects/"
RESOLVE_URL = "/api/v1/projects/resolve"


def detail_url(project_id: object) -> str:
    return f"/api/v1/projects/{project_id}"


def project_json(project: Project) -> dict[str, Any]:
    """The API representation of ``project`` as it is in the database right now."""
    project.refresh_from_db()
    timestamps = DateTimeField()
    return {
        "id": str(project.id),
        "name": project.name,
        "slug": project.slug,
        "repo_url": project.repo_url,
        "status": project.status,
        "created_at": timestamps.to_representation(project.created_at),
        "updated_at": timestamps.to_representation(project.updated_at),
    }


def project_rows() -> list[tuple[Any, ...]]:
    """Every project row, every column: compare before/after to prove nothing changed."""
    return list(
        Project.objects.order_by("id").values_list(
            "id", "tenant_id", "name", "slug", "repo_url", "repo_path", "status", "updated_at"
        )
    )


def error(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}
