import uuid

import pytest

from apps.projects.exceptions import ProjectNotFound
from apps.projects.models import ProjectStatus
from apps.projects.selectors import project_exists, project_get
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("_case", ["uuid", "string"])
def test_project_get_returns_the_tenants_project_by_id(tenant, _case):
    # given
    project = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)
    project_id = project.id if _case == "uuid" else str(project.id)

    # when
    fetched = project_get(tenant=tenant, project_id=project_id)

    # then
    assert fetched == project


@pytest.mark.parametrize("_case", ["foreign", "missing", "malformed"])
def test_project_get_raises_the_same_not_found_for_foreign_missing_and_malformed_ids(
    tenant, other_tenant, _case
):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant)
    project_id = {"foreign": str(foreign.id), "missing": str(uuid.uuid4()), "malformed": "-1"}[
        _case
    ]

    # when
    with pytest.raises(ProjectNotFound) as raised:
        project_get(tenant=tenant, project_id=project_id)

    # then
    assert (raised.value.code, raised.value.message, raised.value.details) == (
        "not_found",
        "Project not found.",
        {},
    )


def test_project_exists_is_true_for_the_tenants_projects_of_any_status(tenant):
    # given
    active = ProjectFactory.create(tenant=tenant)
    archived = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)

    # when / then
    assert project_exists(tenant=tenant, project_id=active.id) is True
    assert project_exists(tenant=tenant, project_id=str(archived.id)) is True


def test_project_exists_can_exclude_archived_projects(tenant):
    # given
    active = ProjectFactory.create(tenant=tenant)
    archived = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)

    # when / then
    assert project_exists(tenant=tenant, project_id=active.id, include_archived=False) is True
    assert project_exists(tenant=tenant, project_id=archived.id, include_archived=False) is False


@pytest.mark.parametrize("_case", ["foreign", "missing", "malformed", "blank"])
def test_project_exists_is_false_for_foreign_missing_and_malformed_ids(tenant, other_tenant, _case):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant)
    project_id = {
        "foreign": str(foreign.id),
        "missing": str(uuid.uuid4()),
        "malformed": "not-a-uuid",
        "blank": "",
    }[_case]

    # when / then
    assert project_exists(tenant=tenant, project_id=project_id) is False
