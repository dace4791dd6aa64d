import uuid

import pytest

from apps.projects.models import ProjectStatus
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import RESOLVE_URL, detail_url, error, project_json, project_rows

pytestmark = pytest.mark.django_db

NOT_FOUND = error("not_found", "Project not found.")


# --- GET --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [ProjectStatus.ACTIVE, ProjectStatus.ARCHIVED])
def test_retrieve_returns_the_project_whatever_its_status(agent, tenant, status):
    # given
    project = ProjectFactory.create(tenant=tenant, repo_url="acme/api", status=status)

    # when
    response = agent.get(detail_url(project.id))

    # then
    assert response.status_code == 200
    assert response.json() == {"data": project_json(project), "meta": {}}


def test_retrieve_of_another_tenants_project_is_the_same_404_as_a_missing_one(user, other_tenant):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant)

    # when
    foreign_response = user.get(detail_url(foreign.id))
    missing_response = user.get(detail_url(uuid.uuid4()))

    # then
    assert (foreign_response.status_code, missing_response.status_code) == (404, 404)
    assert foreign_response.json() == missing_response.json() == NOT_FOUND


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
@pytest.mark.parametrize("bad_id", ["-1", "not-a-uuid", "12345678-1234-1234-1234-12345678901z"])
def test_a_malformed_id_is_not_found(user, tenant, method, bad_id):
    # given
    ProjectFactory.create(tenant=tenant)
    before = project_rows()

    # when
    response = getattr(user, method)(detail_url(bad_id))

    # then
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert project_rows() == before


# --- PATCH ------------------------------------------------------------------------------------


def test_update_changes_the_given_fields_and_returns_the_project(orchestrator, tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, name="Old", slug="old", repo_url="acme/old")

    # when
    response = orchestrator.patch(
        detail_url(project.id),
        {"name": "New", "slug": "new", "repo_url": "git@github.com:acme/new.git"},
    )

    # then
    assert response.status_code == 200
    assert response.json() == {"data": project_json(project), "meta": {}}
    assert (project.name, project.slug, project.repo_url, project.repo_path) == (
        "New",
        "new",
        "github.com/acme/new",
        "acme/new",
    )


@pytest.mark.parametrize("cleared", [None, ""])
def test_update_with_null_or_blank_repo_url_removes_the_repository(user, tenant, cleared):
    # given
    project = ProjectFactory.create(tenant=tenant, name="Keep", repo_url="acme/old")

    # when
    response = user.patch(detail_url(project.id), {"repo_url": cleared})

    # then
    assert response.status_code == 200
    project.refresh_from_db()
    assert (project.name, project.repo_url, project.repo_path) == ("Keep", "", "")


def test_update_can_restore_an_archived_project_so_it_resolves_again(user, tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, slug="back", status=ProjectStatus.ARCHIVED)

    # when
    response = user.patch(detail_url(project.id), {"status": "active"})
    resolved = user.get(RESOLVE_URL, data={"slug": "back"})

    # then
    assert response.json()["data"]["status"] == "active"
    assert resolved.json()["data"]["id"] == str(project.id)


def test_update_to_a_taken_slug_conflicts_and_changes_nothing(user, tenant):
    # given
    ProjectFactory.create(tenant=tenant, slug="taken")
    project = ProjectFactory.create(tenant=tenant, slug="mine")
    before = project_rows()

    # when
    response = user.patch(detail_url(project.id), {"slug": "taken", "name": "Renamed"})

    # then
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "project_slug_taken"
    assert project_rows() == before


@pytest.mark.parametrize(
    ("_case", "payload", "field"),
    [
        ("empty_body", {}, "non_field_errors"),
        ("misspelt_field_only", {"nmae": "Typo"}, "non_field_errors"),
        ("blank_name", {"name": ""}, "name"),
        ("blank_slug", {"slug": ""}, "slug"),
        ("bad_slug", {"slug": "has spaces"}, "slug"),
        ("unknown_status", {"status": "deleted"}, "status"),
    ],
)
def test_update_rejects_invalid_input_and_changes_nothing(user, tenant, _case, payload, field):
    # given
    project = ProjectFactory.create(tenant=tenant)
    before = project_rows()

    # when
    response = user.patch(detail_url(project.id), payload)

    # then
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "validation_error"
    assert list(body["error"]["details"]["fields"]) == [field]
    assert project_rows() == before


def test_update_rejects_an_unparseable_repo_url_and_changes_nothing(user, tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, repo_url="acme/old")
    before = project_rows()

    # when
    response = user.patch(detail_url(project.id), {"repo_url": "just-a-name"})

    # then
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_repo_url"
    assert project_rows() == before


def test_update_of_another_tenants_project_is_404_and_changes_nothing(user, other_tenant):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant, name="Theirs")
    before = project_rows()

    # when
    response = user.patch(detail_url(foreign.id), {"name": "Hijacked", "status": "archived"})

    # then
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert project_rows() == before


# --- DELETE (archive) -------------------------------------------------------------------------


def test_delete_archives_the_project_and_it_is_no_longer_resolved(user, tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, slug="old", repo_url="acme/old")

    # when
    response = user.delete(detail_url(project.id))
    resolved = user.get(RESOLVE_URL, data={"repo_url": "acme/old"})
    fetched = user.get(detail_url(project.id))

    # then
    assert response.status_code == 200
    assert response.json() == {"data": project_json(project), "meta": {}}
    assert project.status == ProjectStatus.ARCHIVED
    assert resolved.status_code == 404
    assert fetched.json()["data"]["status"] == "archived"


def test_delete_is_idempotent(user, tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)
    before = project_rows()

    # when
    response = user.delete(detail_url(project.id))

    # then
    assert response.status_code == 200
    assert response.json()["data"]["status"] == "archived"
    assert project_rows() == before


def test_delete_of_another_tenants_project_is_404_and_changes_nothing(user, other_tenant):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant)
    before = project_rows()

    # when
    response = user.delete(detail_url(foreign.id))

    # then
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert project_rows() == before


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_foreign_tenants_caller_cannot_reach_our_project(
    foreign_agent, make_caller, other_tenant, tenant, method
):
    # given
    project = ProjectFactory.create(tenant=tenant)
    foreign_user = make_caller(other_tenant, "user")
    before = project_rows()

    # when
    response = getattr(foreign_user, method)(
        detail_url(project.id), **({"data": {"name": "X"}} if method == "patch" else {})
    )

    # then
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert project_rows() == before
