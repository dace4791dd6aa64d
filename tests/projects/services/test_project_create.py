import pytest
from django.core.exceptions import ValidationError

from apps.projects.exceptions import InvalidRepoUrl, InvalidSlug, ProjectSlugTaken
from apps.projects.models import Project, ProjectStatus
from apps.projects.services import project_create
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import project_rows

pytestmark = pytest.mark.django_db


def test_project_create_stores_an_active_project_with_a_normalised_repo_url(tenant):
    # when
    project = project_create(
        tenant=tenant,
        name="  Payments API  ",
        slug="Payments-API",
        repo_url="git@GitHub.com:Acme/Payments.git",
    )

    # then
    stored = Project.objects.for_tenant(tenant).get(id=project.id)
    assert (stored.name, stored.slug, stored.status) == (
        "Payments API",
        "payments-api",
        ProjectStatus.ACTIVE,
    )
    assert (stored.repo_url, stored.repo_path) == ("github.com/acme/payments", "acme/payments")


def test_project_create_keeps_a_bare_owner_repo_without_a_host(tenant):
    # when
    project = project_create(tenant=tenant, name="Payments", repo_url="Acme/Payments")

    # then
    assert (project.repo_url, project.repo_path) == ("acme/payments", "acme/payments")


@pytest.mark.parametrize("repo_url", [None, "", "   "])
def test_project_create_without_a_repo_url_stores_blanks(tenant, repo_url):
    # when
    project = project_create(tenant=tenant, name="Docs", repo_url=repo_url)

    # then
    assert (project.repo_url, project.repo_path) == ("", "")


@pytest.mark.parametrize("slug", [None, "", "  "])
def test_project_create_derives_the_slug_from_the_name(tenant, slug):
    # when
    project = project_create(tenant=tenant, name="Payments API (v2)!", slug=slug)

    # then
    assert project.slug == "payments-api-v2"


def test_project_create_refuses_a_slug_taken_in_the_tenant_even_by_an_archived_project(tenant):
    # given
    ProjectFactory.create(tenant=tenant, slug="payments", status=ProjectStatus.ARCHIVED)
    before = project_rows()

    # when
    with pytest.raises(ProjectSlugTaken) as raised:
        project_create(tenant=tenant, name="Payments", slug="payments")

    # then
    assert (raised.value.code, raised.value.http_status, raised.value.details) == (
        "project_slug_taken",
        409,
        {"slug": "payments"},
    )
    assert project_rows() == before


def test_project_create_allows_the_same_slug_in_another_tenant(tenant, other_tenant):
    # given
    ProjectFactory.create(tenant=other_tenant, slug="payments")

    # when
    project = project_create(tenant=tenant, name="Payments", slug="payments")

    # then
    assert project.tenant == tenant
    assert Project.objects.for_tenant(tenant).filter(slug="payments").count() == 1
    assert Project.objects.for_tenant(other_tenant).filter(slug="payments").count() == 1


def test_project_create_refuses_a_name_with_no_derivable_slug(tenant):
    # when
    with pytest.raises(InvalidSlug) as raised:
        project_create(tenant=tenant, name="!!!")

    # then
    assert (raised.value.code, raised.value.http_status) == ("invalid_slug", 422)
    assert Project.objects.count() == 0


@pytest.mark.parametrize(
    ("_case", "kwargs", "field"),
    [
        ("blank_name", {"name": "   ", "slug": "ok"}, "name"),
        ("long_name", {"name": "x" * 201, "slug": "ok"}, "name"),
        ("bad_slug", {"name": "Ok", "slug": "not a slug!"}, "slug"),
        ("long_slug", {"name": "Ok", "slug": "s" * 101}, "slug"),
    ],
)
def test_project_create_validates_fields_before_writing(tenant, _case, kwargs, field):
    # when
    with pytest.raises(ValidationError) as raised:
        project_create(tenant=tenant, **kwargs)

    # then
    assert list(raised.value.message_dict) == [field]
    assert Project.objects.count() == 0


def test_project_create_refuses_an_unparseable_repo_url(tenant):
    # when
    with pytest.raises(InvalidRepoUrl):
        project_create(tenant=tenant, name="Payments", repo_url="https://github.com")

    # then
    assert Project.objects.count() == 0
