import uuid

import pytest
from django.core.exceptions import ValidationError

from apps.projects.exceptions import ProjectNotFound, ProjectSlugTaken
from apps.projects.models import ProjectStatus
from apps.projects.services import project_update
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import project_rows

pytestmark = pytest.mark.django_db


def test_project_update_changes_only_the_given_fields(tenant):
    # given
    project = ProjectFactory.create(
        tenant=tenant, name="Old", slug="old", repo_url="github.com/acme/old"
    )

    # when
    updated = project_update(tenant=tenant, project_id=project.id, name=" New ")

    # then
    project.refresh_from_db()
    assert updated == project
    assert (project.name, project.slug, project.repo_url, project.status) == (
        "New",
        "old",
        "github.com/acme/old",
        ProjectStatus.ACTIVE,
    )


def test_project_update_normalises_a_new_repo_url_and_its_path(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, repo_url="github.com/acme/old")

    # when
    project_update(tenant=tenant, project_id=project.id, repo_url="https://GitLab.com/Acme/New.git")

    # then
    project.refresh_from_db()
    assert (project.repo_url, project.repo_path) == ("gitlab.com/acme/new", "acme/new")


def test_project_update_with_a_blank_repo_url_removes_the_repository(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, repo_url="github.com/acme/old")

    # when
    project_update(tenant=tenant, project_id=str(project.id), repo_url="")

    # then
    project.refresh_from_db()
    assert (project.repo_url, project.repo_path) == ("", "")


def test_project_update_can_restore_an_archived_project(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)

    # when
    project_update(tenant=tenant, project_id=project.id, status=ProjectStatus.ACTIVE)

    # then
    project.refresh_from_db()
    assert project.status == ProjectStatus.ACTIVE


def test_project_update_with_nothing_to_change_writes_nothing(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant)
    before = project_rows()

    # when
    project_update(tenant=tenant, project_id=project.id)

    # then
    assert project_rows() == before


def test_project_update_refuses_a_slug_taken_in_the_tenant(tenant):
    # given
    ProjectFactory.create(tenant=tenant, slug="taken")
    project = ProjectFactory.create(tenant=tenant, slug="mine")
    before = project_rows()

    # when
    with pytest.raises(ProjectSlugTaken) as raised:
        project_update(tenant=tenant, project_id=project.id, slug="taken", name="Renamed")

    # then
    assert raised.value.details == {"slug": "taken"}
    assert project_rows() == before


def test_project_update_refuses_an_invalid_status(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant)
    before = project_rows()

    # when
    with pytest.raises(ValidationError) as raised:
        project_update(tenant=tenant, project_id=project.id, status="deleted")

    # then
    assert list(raised.value.message_dict) == ["status"]
    assert project_rows() == before


@pytest.mark.parametrize("_case", ["foreign", "missing", "malformed"])
def test_project_update_of_a_foreign_missing_or_malformed_id_is_not_found_and_changes_nothing(
    tenant, other_tenant, _case
):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant, name="Theirs")
    project_id = {"foreign": str(foreign.id), "missing": str(uuid.uuid4()), "malformed": "-1"}[
        _case
    ]
    before = project_rows()

    # when
    with pytest.raises(ProjectNotFound):
        project_update(tenant=tenant, project_id=project_id, name="Hijacked")

    # then
    assert project_rows() == before
