import pytest

from apps.projects.models import ProjectStatus
from apps.projects.selectors import resolve_project
from tests.projects.factories import ProjectFactory
from tests.projects.helpers import RESOLVE_URL, error, project_json

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["agent", "user", "orchestrator", "superadmin"])
@pytest.mark.parametrize(
    "repo_url",
    ["git@github.com:acme/api.git", "https://github.com/acme/api", "acme/api"],
)
def test_resolve_by_each_repo_url_form_returns_the_project(request, tenant, role, repo_url):
    # given
    caller = request.getfixturevalue(role)
    project = ProjectFactory.create(tenant=tenant, repo_url="https://github.com/acme/api.git")

    # when
    response = caller.get(RESOLVE_URL, data={"repo_url": repo_url})

    # then
    assert response.status_code == 200
    assert response.json() == {"data": project_json(project), "meta": {}}


@pytest.mark.parametrize(
    ("_case", "params", "expected_slug"),
    [
        ("slug_over_repo_url", {"slug": "alpha", "repo_url": "acme/beta"}, "alpha"),
        ("slug_over_name", {"slug": "alpha", "name": "Beta"}, "alpha"),
        ("repo_url_over_name", {"repo_url": "acme/alpha", "name": "Beta"}, "alpha"),
        ("blank_slug_is_absent", {"slug": "", "repo_url": "acme/beta"}, "beta"),
        ("name_alone_any_case", {"name": "bEtA"}, "beta"),
    ],
)
def test_resolve_applies_precedence_slug_then_repo_url_then_name(
    agent, tenant, _case, params, expected_slug
):
    # given
    ProjectFactory.create(
        tenant=tenant, slug="alpha", name="Alpha", repo_url="github.com/acme/alpha"
    )
    ProjectFactory.create(tenant=tenant, slug="beta", name="Beta", repo_url="github.com/acme/beta")

    # when
    response = agent.get(RESOLVE_URL, data=params)

    # then
    assert response.status_code == 200
    assert response.json()["data"]["slug"] == expected_slug


def test_resolve_returns_the_same_project_as_the_selector(agent, tenant):
    # given
    ProjectFactory.create(tenant=tenant, name="Docs", repo_url="acme/docs")

    # when
    response = agent.get(RESOLVE_URL, data={"name": "docs"})

    # then
    assert response.json()["data"] == project_json(resolve_project(tenant=tenant, name="docs"))


@pytest.mark.parametrize(
    ("_case", "params", "message"),
    [
        ("slug", {"slug": "missing"}, "No active project matches this slug."),
        ("repo_url", {"repo_url": "acme/missing"}, "No active project matches this repo_url."),
        ("name", {"name": "Missing"}, "No active project matches this name."),
    ],
)
def test_resolve_with_no_match_is_not_found(agent, tenant, _case, params, message):
    # given
    ProjectFactory.create(tenant=tenant, slug="present", name="Present", repo_url="acme/present")

    # when
    response = agent.get(RESOLVE_URL, data=params)

    # then
    assert response.status_code == 404
    assert response.json() == error("not_found", message)


@pytest.mark.parametrize(
    ("_case", "params"),
    [("no_params", {}), ("all_blank", {"slug": "", "repo_url": " ", "name": ""})],
)
def test_resolve_without_an_identifier_is_no_identifier(agent, _case, params):
    # when
    response = agent.get(RESOLVE_URL, data=params)

    # then
    assert response.status_code == 422
    assert response.json() == error(
        "no_identifier", "Supply one of slug, repo_url or name to resolve a project."
    )


def test_resolve_with_an_ambiguous_repo_url_conflicts_and_lists_the_candidates(agent, tenant):
    # given
    api = ProjectFactory.create(
        tenant=tenant, slug="api", name="API", repo_url="github.com/acme/mono"
    )
    web = ProjectFactory.create(
        tenant=tenant, slug="web", name="Web", repo_url="github.com/acme/mono"
    )

    # when
    response = agent.get(RESOLVE_URL, data={"repo_url": "acme/mono"})

    # then
    assert response.status_code == 409
    assert response.json() == error(
        "ambiguous_resolution",
        "This repo_url matches more than one active project; resolve by slug instead.",
        {
            "identifier": "repo_url",
            "value": "acme/mono",
            "candidates": [
                {"id": str(api.id), "slug": "api", "name": "API"},
                {"id": str(web.id), "slug": "web", "name": "Web"},
            ],
        },
    )


def test_resolve_with_an_ambiguous_name_conflicts(agent, tenant):
    # given
    ProjectFactory.create(tenant=tenant, name="Billing")
    ProjectFactory.create(tenant=tenant, name="billing")

    # when
    response = agent.get(RESOLVE_URL, data={"name": "BILLING"})

    # then
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "ambiguous_resolution"


@pytest.mark.parametrize(
    ("_case", "params"),
    [
        ("slug", {"slug": "target"}),
        ("repo_url", {"repo_url": "git@github.com:acme/target.git"}),
        ("name", {"name": "Target"}),
    ],
)
def test_resolve_skips_archived_and_foreign_projects(agent, tenant, other_tenant, _case, params):
    # given
    ProjectFactory.create(
        tenant=tenant,
        slug="target",
        name="Target",
        repo_url="acme/target",
        status=ProjectStatus.ARCHIVED,
    )
    ProjectFactory.create(tenant=other_tenant, slug="target", name="Target", repo_url="acme/target")

    # when
    response = agent.get(RESOLVE_URL, data=params)

    # then
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_resolve_rejects_an_unparseable_repo_url(agent):
    # when
    response = agent.get(RESOLVE_URL, data={"repo_url": "https://github.com"})

    # then
    assert response.status_code == 422
    assert response.json() == error(
        "invalid_repo_url",
        "repo_url must name a repository, e.g. 'github.com/owner/repo' or 'owner/repo'.",
        {"repo_url": "https://github.com"},
    )


def test_resolve_rejects_an_overlong_identifier_with_the_envelope(agent):
    # when
    response = agent.get(RESOLVE_URL, data={"name": "x" * 201})

    # then
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "validation_error"
    assert list(body["error"]["details"]["fields"]) == ["name"]
