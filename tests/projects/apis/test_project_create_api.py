import pytest

from apps.projects.models import Project, ProjectStatus
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import LIST_URL, error, project_json, project_rows

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["user", "orchestrator", "superadmin"])
def test_create_returns_the_new_project_with_a_normalised_repo_url(request, tenant, role):
    # given
    caller = request.getfixturevalue(role)

    # when
    response = caller.post(
        LIST_URL,
        {
            "name": "Payments",
            "slug": "payments",
            "repo_url": "https://github.com/Acme/Payments.git",
        },
    )

    # then
    assert response.status_code == 201
    project = Project.objects.for_tenant(tenant).get(slug="payments")
    assert response.json() == {"data": project_json(project), "meta": {}}
    assert response.json()["data"]["repo_url"] == "github.com/acme/payments"
    assert response.json()["data"]["status"] == ProjectStatus.ACTIVE


def test_create_derives_the_slug_and_accepts_a_null_repo_url(user, tenant):
    # when
    response = user.post(LIST_URL, {"name": "Payments API", "repo_url": None})

    # then
    assert response.status_code == 201
    assert (response.json()["data"]["slug"], response.json()["data"]["repo_url"]) == (
        "payments-api",
        "",
    )


def test_create_with_a_taken_slug_conflicts_and_writes_nothing(user, tenant):
    # given
    ProjectFactory.create(tenant=tenant, slug="payments")
    before = project_rows()

    # when
    response = user.post(LIST_URL, {"name": "Payments", "slug": "payments"})

    # then
    assert response.status_code == 409
    assert response.json() == error(
        "project_slug_taken",
        "A project with slug 'payments' already exists in this tenant.",
        {"slug": "payments"},
    )
    assert project_rows() == before


def test_create_may_reuse_a_slug_from_another_tenant(user, tenant, other_tenant):
    # given
    ProjectFactory.create(tenant=other_tenant, slug="payments")

    # when
    response = user.post(LIST_URL, {"name": "Payments", "slug": "payments"})

    # then
    assert response.status_code == 201
    assert Project.objects.for_tenant(tenant).filter(slug="payments").count() == 1


@pytest.mark.parametrize(
    ("_case", "payload", "field"),
    [
        ("missing_name", {"slug": "ok"}, "name"),
        ("blank_name", {"name": "  "}, "name"),
        ("long_name", {"name": "x" * 201}, "name"),
        ("bad_slug", {"name": "Ok", "slug": "Not A Slug!"}, "slug"),
        ("long_repo_url", {"name": "Ok", "repo_url": "a/" + "b" * 499}, "repo_url"),
        ("name_not_a_string", {"name": {"nested": True}}, "name"),
    ],
)
def test_create_rejects_invalid_input_with_the_error_envelope(user, _case, payload, field):
    # when
    response = user.post(LIST_URL, payload)

    # then
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "validation_error"
    assert list(body["error"]["details"]["fields"]) == [field]
    assert Project.objects.count() == 0


def test_create_rejects_an_unparseable_repo_url(user):
    # when
    response = user.post(LIST_URL, {"name": "Payments", "repo_url": "https://github.com/acme"})

    # then
    assert response.status_code == 422
    assert response.json() == error(
        "invalid_repo_url",
        "repo_url must name a repository, e.g. 'github.com/owner/repo' or 'owner/repo'.",
        {"repo_url": "https://github.com/acme"},
    )
    assert Project.objects.count() == 0


def test_create_rejects_a_name_that_yields_no_slug(user):
    # when
    response = user.post(LIST_URL, {"name": "!!!"})

    # then
    assert response.status_code == 422
    assert response.json() == error(
        "invalid_slug",
        "No slug can be derived from this name; supply a slug.",
        {"name": "!!!"},
    )
    assert Project.objects.count() == 0
