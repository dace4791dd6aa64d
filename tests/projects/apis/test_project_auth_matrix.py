"""Who may call which project endpoint, and what a refused caller sees and changes (nothing)."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.projects.models import Project
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_revoke
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import LIST_URL, RESOLVE_URL, detail_url, error, project_rows

pytestmark = pytest.mark.django_db

ENDPOINTS = ["list", "create", "retrieve", "update", "archive", "resolve"]
WRITE_ENDPOINTS = {"create", "update", "archive"}
SUCCESS_STATUS = {
    "list": 200,
    "create": 201,
    "retrieve": 200,
    "update": 200,
    "archive": 200,
    "resolve": 200,
}
ROLE_FIXTURES = ["agent", "user", "orchestrator", "superadmin"]
WRITE_ROLES = {"user", "orchestrator", "superadmin"}


def send(client: APIClient, endpoint: str, project: Project) -> Any:
    """One representative, valid request to ``endpoint`` about ``project``."""
    if endpoint == "list":
        return client.get(LIST_URL)
    if endpoint == "create":
        return client.post(LIST_URL, {"name": "Created", "slug": "created"}, format="json")
    if endpoint == "retrieve":
        return client.get(detail_url(project.id))
    if endpoint == "update":
        return client.patch(detail_url(project.id), {"name": "Renamed"}, format="json")
    if endpoint == "archive":
        return client.delete(detail_url(project.id))
    return client.get(RESOLVE_URL, {"slug": project.slug})


@pytest.fixture
def project(tenant):
    return ProjectFactory.create(tenant=tenant, name="Target", slug="target")


ROLE_CASES = [
    (
        f"{role}-{endpoint}",
        role,
        endpoint,
        SUCCESS_STATUS[endpoint] if endpoint not in WRITE_ENDPOINTS or role in WRITE_ROLES else 403,
    )
    for role in ROLE_FIXTURES
    for endpoint in ENDPOINTS
]


@pytest.mark.parametrize(("_case", "role", "endpoint", "expected_status"), ROLE_CASES)
def test_each_role_is_allowed_or_refused_per_endpoint(
    request, project, _case, role, endpoint, expected_status
):
    # given
    caller = request.getfixturevalue(role)

    # when
    response = send(caller.client, endpoint, project)

    # then
    assert response.status_code == expected_status


@pytest.mark.parametrize("endpoint", sorted(WRITE_ENDPOINTS))
def test_an_agent_is_refused_writes_and_nothing_changes(agent, project, endpoint):
    # given
    before = project_rows()

    # when
    response = send(agent.client, endpoint, project)

    # then
    assert response.status_code == 403
    assert response.json() == error(
        "permission_denied", "This API key's role may not call this endpoint."
    )
    assert project_rows() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_anonymous_callers_are_not_authenticated(anonymous, project, endpoint):
    # given
    before = project_rows()

    # when
    response = send(anonymous, endpoint, project)

    # then
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"
    assert project_rows() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_revoked_key_is_refused(user, project, endpoint):
    # given
    api_key_revoke(api_key=user.key)
    before = project_rows()

    # when
    response = send(user.client, endpoint, project)

    # then
    assert response.status_code == 401
    assert response.json() == error("authentication_failed", "Invalid or revoked API key.")
    assert project_rows() == before


@pytest.mark.parametrize(
    ("_case", "header"),
    [
        ("wrong_scheme", "Token abc"),
        ("basic_scheme", "Basic dXNlcjpwYXNz"),
        ("no_key", "Bearer"),
        ("two_tokens", "Bearer abc def"),
    ],
)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_malformed_authorization_header_is_refused(project, endpoint, _case, header):
    # given
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    before = project_rows()

    # when
    response = send(client, endpoint, project)

    # then
    assert response.status_code == 401
    assert response.json() == error(
        "authentication_failed", "Malformed Authorization header; use 'Bearer <key>'."
    )
    assert project_rows() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_an_unknown_key_is_refused(project, endpoint):
    # given
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer eng_000000000000_not-a-real-key")

    # when
    response = send(client, endpoint, project)

    # then
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_superadmin_without_impersonation_must_name_a_tenant(make_caller, project, endpoint):
    # given
    superadmin = make_caller(None, ApiKeyRole.SUPERADMIN)
    before = project_rows()

    # when
    response = send(superadmin.client, endpoint, project)

    # then
    assert response.status_code == 422
    assert response.json() == error(
        "impersonation_tenant_required",
        "A superadmin key must name a tenant in the X-Impersonate-Tenant header.",
    )
    assert project_rows() == before


def test_a_superadmin_acts_only_on_the_impersonated_tenant(make_caller, tenant, other_tenant):
    # given
    ours = ProjectFactory.create(tenant=tenant, name="Ours")
    theirs = ProjectFactory.create(tenant=other_tenant, name="Theirs")
    superadmin = make_caller(None, ApiKeyRole.SUPERADMIN, impersonate=other_tenant)

    # when
    listed = superadmin.get(LIST_URL)
    created = superadmin.post(LIST_URL, {"name": "Made By Operator"})
    foreign = superadmin.get(detail_url(ours.id))

    # then
    assert [row["id"] for row in listed.json()["data"]] == [str(theirs.id)]
    assert created.status_code == 201
    created_id = created.json()["data"]["id"]
    assert Project.objects.for_tenant(other_tenant).filter(id=created_id).count() == 1
    assert foreign.status_code == 404
