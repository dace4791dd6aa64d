"""HTTP API for projects (STYLE rules 6-8): validate input, call one service or selector,
render output. Permissions and tenancy come from ``TenantApi``; errors from the one handler.
"""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from typing_extensions import override

from apps.core.api.fields import InputSerializer, LimitField, OffsetField, TimestampField
from apps.core.api.serializers import COMMON_ERRORS, ErrorSerializer, render_many
from apps.projects.models import (
    NAME_MAX_LENGTH,
    REPO_URL_MAX_LENGTH,
    SLUG_MAX_LENGTH,
    Project,
    ProjectStatus,
)
from apps.projects.selectors import project_get, project_list_page, resolve_project
from apps.projects.services import project_archive, project_create, project_update
from apps.tenancy.api_base import WRITE_METHODS, TenantApi, idempotent
from apps.tenancy.models import ApiKeyRole

TAGS = ["projects"]
LIST_DEFAULT_LIMIT = 50
LIST_MAX_LIMIT = 200
#: Agents read and resolve projects; creating and changing them is for people and their tools.
PROJECT_WRITE_ROLES = frozenset({ApiKeyRole.USER, ApiKeyRole.ORCHESTRATOR, ApiKeyRole.SUPERADMIN})
WRITES_BY_PEOPLE = dict.fromkeys(WRITE_METHODS, PROJECT_WRITE_ROLES)


# Every method that returns one project shares this output until the first divergence.
class ProjectOutputSerializer(serializers.Serializer[Project]):
    id = serializers.UUIDField()
    name = serializers.CharField()
    slug = serializers.CharField()
    repo_url = serializers.CharField(
        help_text="Normalised: lowercase host/owner/repo (or bare owner/repo); blank if none."
    )
    status = serializers.ChoiceField(choices=ProjectStatus.choices)
    created_at = TimestampField()
    updated_at = TimestampField()


# Envelopes exist for the schema only. `data: Any` because a field named `data` shadows
# Serializer.data (a ReturnDict property) as far as the type checker can tell; at runtime the
# metaclass moves declared fields aside, so the property is untouched.
class ProjectDetailOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ProjectOutputSerializer()
    meta = serializers.DictField()


def _project_response(project: Project, *, status: int = 200) -> Response:
    return Response({"data": ProjectOutputSerializer(project).data, "meta": {}}, status=status)


class ProjectListFilterSerializer(InputSerializer):
    status = serializers.ChoiceField(choices=ProjectStatus.choices, required=False)
    limit = LimitField(default=LIST_DEFAULT_LIMIT, max_value=LIST_MAX_LIMIT)
    offset = OffsetField()


class ProjectListMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


class ProjectListOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ProjectOutputSerializer(many=True)
    meta = ProjectListMetaSerializer()


class ProjectCreateInputSerializer(InputSerializer):
    name = serializers.CharField(max_length=NAME_MAX_LENGTH)
    slug = serializers.SlugField(
        max_length=SLUG_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text="Unique in the tenant. Defaults to a slug of the name.",
    )
    repo_url = serializers.CharField(
        max_length=REPO_URL_MAX_LENGTH,
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="Any of git@host:owner/repo.git, https://host/owner/repo(.git), owner/repo.",
    )


class ProjectListApi(TenantApi):
    allowed_roles_by_method = WRITES_BY_PEOPLE
    rate_limit_exempt = {"GET": "a page of the tenant's projects by name"}

    @extend_schema(
        operation_id="projects_list",
        parameters=[ProjectListFilterSerializer],
        responses={200: ProjectListOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        """List the tenant's projects, active and archived, ordered by name."""
        filters = ProjectListFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = project_list_page(
            tenant=self.scope.tenant,
            status=filters.validated_data.get("status"),
            limit=filters.validated_data["limit"],
            offset=filters.validated_data["offset"],
        )
        return Response(
            {
                "data": render_many(ProjectOutputSerializer, page.items),
                "meta": {
                    "total_count": page.total_count,
                    "limit": page.limit,
                    "offset": page.offset,
                },
            }
        )

    @extend_schema(
        operation_id="projects_create",
        request=ProjectCreateInputSerializer,
        responses={201: ProjectDetailOutputSerializer, 409: ErrorSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Create a project (user, orchestrator or superadmin keys). 409 project_slug_taken
        if the slug is already used in this tenant."""
        payload = ProjectCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        project = project_create(
            tenant=self.scope.tenant,
            name=payload.validated_data["name"],
            slug=payload.validated_data.get("slug"),
            repo_url=payload.validated_data.get("repo_url"),
        )
        return _project_response(project, status=201)


class ProjectUpdateInputSerializer(InputSerializer):
    name = serializers.CharField(max_length=NAME_MAX_LENGTH, required=False)
    slug = serializers.SlugField(max_length=SLUG_MAX_LENGTH, required=False)
    repo_url = serializers.CharField(
        max_length=REPO_URL_MAX_LENGTH,
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="Blank or null removes the repository.",
    )
    status = serializers.ChoiceField(
        choices=ProjectStatus.choices,
        required=False,
        help_text="'archived' archives the project; 'active' restores it.",
    )

    @override
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # An empty PATCH is almost always a misspelt field name; say so instead of a no-op.
        if not attrs:
            raise serializers.ValidationError(
                "Supply at least one of name, slug, repo_url or status."
            )
        return attrs


class ProjectDetailApi(TenantApi):
    allowed_roles_by_method = WRITES_BY_PEOPLE
    rate_limit_exempt = {"GET": "one project by id"}

    @extend_schema(
        operation_id="projects_retrieve",
        responses={200: ProjectDetailOutputSerializer, 404: ErrorSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def get(self, request: Request, project_id: uuid.UUID) -> Response:
        """Fetch one project, active or archived. Another tenant's id is a 404."""
        project = project_get(tenant=self.scope.tenant, project_id=project_id)
        return _project_response(project)

    @extend_schema(
        operation_id="projects_update",
        request=ProjectUpdateInputSerializer,
        responses={
            200: ProjectDetailOutputSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            **COMMON_ERRORS,
        },
        tags=TAGS,
    )
    @idempotent
    def patch(self, request: Request, project_id: uuid.UUID) -> Response:
        """Change a project's name, slug, repository or status (user, orchestrator or
        superadmin keys). Omitted fields are left as they are."""
        payload = ProjectUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = project_update(
            tenant=self.scope.tenant,
            project_id=project_id,
            name=data.get("name"),
            slug=data.get("slug"),
            # null and "" both mean "remove the repository"; absent means "leave it".
            repo_url=(data["repo_url"] or "") if "repo_url" in data else None,
            status=data.get("status"),
        )
        return _project_response(project)

    @extend_schema(
        operation_id="projects_archive",
        responses={200: ProjectDetailOutputSerializer, 404: ErrorSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    @idempotent
    def delete(self, request: Request, project_id: uuid.UUID) -> Response:
        """Archive a project (user, orchestrator or superadmin keys); idempotent. Nothing is
        deleted: the project stays listed and fetchable, but is no longer resolved."""
        project = project_archive(tenant=self.scope.tenant, project_id=project_id)
        return _project_response(project)


class ProjectResolveQuerySerializer(InputSerializer):
    slug = serializers.CharField(
        max_length=SLUG_MAX_LENGTH, required=False, allow_blank=True, help_text="Exact slug."
    )
    repo_url = serializers.CharField(
        max_length=REPO_URL_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text="git@host:owner/repo.git, https://host/owner/repo(.git) or bare owner/repo.",
    )
    name = serializers.CharField(
        max_length=NAME_MAX_LENGTH,
        required=False,
        allow_blank=True,
        help_text="Case-insensitive project name.",
    )


class ProjectResolveApi(TenantApi):
    rate_limit_exempt = {"GET": "one project by slug, repository or name, on indexes"}

    @extend_schema(
        operation_id="projects_resolve",
        parameters=[ProjectResolveQuerySerializer],
        responses={
            200: ProjectDetailOutputSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
            **COMMON_ERRORS,
        },
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        """Map a slug, repository URL or name to one active project (precedence
        slug > repo_url > name; the first one present is the only one used).

        404 not_found if nothing matches, 422 no_identifier if none is supplied, 409
        ambiguous_resolution if repo_url or name matches several active projects.
        """
        query = ProjectResolveQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        project = resolve_project(
            tenant=self.scope.tenant,
            slug=query.validated_data.get("slug"),
            repo_url=query.validated_data.get("repo_url"),
            name=query.validated_data.get("name"),
        )
        return _project_response(project)
