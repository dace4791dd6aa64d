import pytest

from apps.projects.models import ProjectStatus
from apps.projects.selectors import project_list, project_list_page
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def test_project_list_returns_only_the_tenants_projects_ordered_by_name(tenant, other_tenant):
    # given
    beta = ProjectFactory.create(tenant=tenant, name="Beta")
    alpha = ProjectFactory.create(tenant=tenant, name="Alpha", status=ProjectStatus.ARCHIVED)
    ProjectFactory.create(tenant=other_tenant, name="Aardvark")

    # when
    projects = list(project_list(tenant=tenant))

    # then
    assert projects == [alpha, beta]


@pytest.mark.parametrize(
    ("_case", "status", "expected_names"),
    [
        ("all", None, ["Alpha", "Beta", "Gamma"]),
        ("active", ProjectStatus.ACTIVE, ["Alpha", "Gamma"]),
        ("archived", ProjectStatus.ARCHIVED, ["Beta"]),
    ],
)
def test_project_list_filters_by_status(tenant, _case, status, expected_names):
    # given
    ProjectFactory.create(tenant=tenant, name="Alpha")
    ProjectFactory.create(tenant=tenant, name="Beta", status=ProjectStatus.ARCHIVED)
    ProjectFactory.create(tenant=tenant, name="Gamma")

    # when
    projects = project_list(tenant=tenant, status=status)

    # then
    assert [project.name for project in projects] == expected_names


def test_project_list_page_slices_and_counts_in_two_queries(tenant, django_assert_num_queries):
    # given
    for name in ["A", "B", "C", "D", "E"]:
        ProjectFactory.create(tenant=tenant, name=name)

    # when
    with django_assert_num_queries(2):
        page = project_list_page(tenant=tenant, limit=2, offset=1)

    # then
    assert [project.name for project in page.items] == ["B", "C"]
    assert (page.total_count, page.limit, page.offset) == (5, 2, 1)


def test_project_list_page_past_the_end_is_empty_with_the_full_count(tenant):
    # given
    ProjectFactory.create(tenant=tenant)

    # when
    page = project_list_page(tenant=tenant, limit=10, offset=5)

    # then
    assert (page.items, page.total_count) == ([], 1)
