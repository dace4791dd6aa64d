"""What each admitted role gets from each project endpoint, and a superadmin's reach.

Refusals by role or credential, for every endpoint, are in the URLconf-driven matrix
(tests/core/test_auth_matrix_all_endpoints.py).
"""

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.projects.models import Project
from apps.tenancy.models import ApiKeyRole
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import LIST_URL, RESOLVE_URL, detail_url

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
    (f"{role}-{endpoint}", role, endpoint, SUCCESS_STATUS[endpoint])
    for role in ROLE_FIXTURES
    for endpoint in ENDPOINTS
    if endpoint not in WRITE_ENDPOINTS or role in WRITE_ROLES
]


@pytest.mark.parametrize(("_case", "role", "endpoint", "expected_status"), ROLE_CASES)
def test_each_admitted_role_succeeds_per_endpoint(
    request, project, _case, role, endpoint, expected_status
):
    # given
    caller = request.getfixturevalue(role)

    # when
    response = send(caller.client, endpoint, project)

    # then
    assert response.status_code == expected_status


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
