import uuid

import pytest

from apps.projects.exceptions import ProjectNotFound
from apps.projects.models import ProjectStatus
from apps.projects.services import project_archive
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import project_rows

pytestmark = pytest.mark.django_db


def test_project_archive_archives_and_keeps_the_row(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, slug="keep", repo_url="acme/keep")

    # when
    archived = project_archive(tenant=tenant, project_id=project.id)

    # then
    project.refresh_from_db()
    assert archived == project
    assert (project.status, project.slug, project.repo_url) == (
        ProjectStatus.ARCHIVED,
        "keep",
        "acme/keep",
    )


def test_project_archive_is_idempotent(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, status=ProjectStatus.ARCHIVED)
    before = project_rows()

    # when
    archived = project_archive(tenant=tenant, project_id=project.id)

    # then
    assert archived.status == ProjectStatus.ARCHIVED
    assert project_rows() == before


@pytest.mark.parametrize("_case", ["foreign", "missing", "malformed"])
def test_project_archive_of_a_foreign_missing_or_malformed_id_is_not_found_and_changes_nothing(
    tenant, other_tenant, _case
):
    # given
    foreign = ProjectFactory.create(tenant=other_tenant)
    project_id = {"foreign": str(foreign.id), "missing": str(uuid.uuid4()), "malformed": "nope"}[
        _case
    ]
    before = project_rows()

    # when
    with pytest.raises(ProjectNotFound):
        project_archive(tenant=tenant, project_id=project_id)

    # then
    assert project_rows() == before
