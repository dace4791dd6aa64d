import pytest

from apps.projects.models import ProjectStatus
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import LIST_URL, project_json

pytestmark = pytest.mark.django_db


def test_list_returns_the_tenants_projects_in_the_envelope(agent, tenant, other_tenant):
    # given
    beta = ProjectFactory.create(
        tenant=tenant, name="Beta", repo_url="git@github.com:acme/beta.git"
    )
    alpha = ProjectFactory.create(tenant=tenant, name="Alpha", status=ProjectStatus.ARCHIVED)
    ProjectFactory.create(tenant=other_tenant, name="Aardvark")

    # when
    response = agent.get(LIST_URL)

    # then
    assert response.status_code == 200
    assert response.json() == {
        "data": [project_json(alpha), project_json(beta)],
        "meta": {"total_count": 2, "limit": 50, "offset": 0},
    }


@pytest.mark.parametrize(
    ("_case", "status", "expected_names"),
    [("active", "active", ["Alpha", "Gamma"]), ("archived", "archived", ["Beta"])],
)
def test_list_filters_by_status(user, tenant, _case, status, expected_names):
    # given
    ProjectFactory.create(tenant=tenant, name="Alpha")
    ProjectFactory.create(tenant=tenant, name="Beta", status=ProjectStatus.ARCHIVED)
    ProjectFactory.create(tenant=tenant, name="Gamma")

    # when
    response = user.get(LIST_URL, data={"status": status})

    # then
    body = response.json()
    assert [row["name"] for row in body["data"]] == expected_names
    assert body["meta"]["total_count"] == len(expected_names)


def test_list_paginates_with_limit_and_offset(user, tenant):
    # given
    for name in ["A", "B", "C", "D", "E"]:
        ProjectFactory.create(tenant=tenant, name=name)

    # when
    response = user.get(LIST_URL, data={"limit": 2, "offset": 2})

    # then
    body = response.json()
    assert [row["name"] for row in body["data"]] == ["C", "D"]
    assert body["meta"] == {"total_count": 5, "limit": 2, "offset": 2}


@pytest.mark.parametrize("project_count", [1, 6])
def test_list_query_count_does_not_grow_with_rows(
    user, tenant, django_assert_num_queries, project_count
):
    # given
    for _ in range(project_count):
        ProjectFactory.create(tenant=tenant)
    user.get(LIST_URL)  # the first call looks the key up and records last_used_at

    # when: page + count (the key authenticates from the process's cache)
    with django_assert_num_queries(2):
        response = user.get(LIST_URL)

    # then
    assert len(response.json()["data"]) == project_count


@pytest.mark.parametrize(
    ("_case", "params", "field"),
    [
        ("unknown_status", {"status": "deleted"}, "status"),
        ("zero_limit", {"limit": 0}, "limit"),
        ("limit_over_max", {"limit": 201}, "limit"),
        ("non_numeric_limit", {"limit": "ten"}, "limit"),
        ("negative_offset", {"offset": -1}, "offset"),
    ],
)
def test_list_rejects_invalid_filters_with_the_error_envelope(user, tenant, _case, params, field):
    # when
    response = user.get(LIST_URL, data=params)

    # then
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "validation_error"
    assert list(body["error"]["details"]["fields"]) == [field]
