import pytest

from apps.projects.exceptions import (
    AmbiguousResolution,
    InvalidRepoUrl,
    NoIdentifier,
    ProjectNotFound,
)
from apps.projects.models import ProjectStatus
from apps.projects.selectors import resolve_project
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

REPO_FORMS = {
    "scp_like": "git@github.com:acme/api.git",
    "https": "https://github.com/acme/api",
    "https_git": "https://github.com/acme/api.git",
    "bare": "acme/api",
}


# --- precedence: slug > repo_url > name, first present wins -----------------------------------


def test_slug_wins_over_repo_url(tenant):
    # given
    by_slug = ProjectFactory.create(tenant=tenant, slug="alpha")
    ProjectFactory.create(tenant=tenant, slug="beta", repo_url="github.com/acme/beta")

    # when
    project = resolve_project(tenant=tenant, slug="alpha", repo_url="acme/beta")

    # then
    assert project == by_slug


def test_slug_wins_over_name(tenant):
    # given
    by_slug = ProjectFactory.create(tenant=tenant, slug="alpha", name="Alpha")
    ProjectFactory.create(tenant=tenant, slug="beta", name="Beta")

    # when
    project = resolve_project(tenant=tenant, slug="alpha", name="Beta")

    # then
    assert project == by_slug


def test_repo_url_wins_over_name(tenant):
    # given
    by_repo = ProjectFactory.create(tenant=tenant, name="Alpha", repo_url="github.com/acme/alpha")
    ProjectFactory.create(tenant=tenant, name="Beta")

    # when
    project = resolve_project(tenant=tenant, repo_url="acme/alpha", name="Beta")

    # then
    assert project == by_repo


def test_slug_wins_over_repo_url_and_name_together(tenant):
    # given
    by_slug = ProjectFactory.create(tenant=tenant, slug="alpha")
    ProjectFactory.create(tenant=tenant, name="Beta", repo_url="github.com/acme/beta")

    # when
    project = resolve_project(tenant=tenant, slug="alpha", repo_url="acme/beta", name="Beta")

    # then
    assert project == by_slug


def test_a_missing_slug_does_not_fall_through_to_repo_url_or_name(tenant):
    # given
    ProjectFactory.create(tenant=tenant, slug="beta", name="Beta", repo_url="github.com/acme/beta")

    # when
    with pytest.raises(ProjectNotFound) as raised:
        resolve_project(tenant=tenant, slug="nope", repo_url="acme/beta", name="Beta")

    # then
    assert raised.value.message == "No active project matches this slug."


def test_a_missing_repo_url_does_not_fall_through_to_name(tenant):
    # given
    ProjectFactory.create(tenant=tenant, name="Beta", repo_url="github.com/acme/beta")

    # when
    with pytest.raises(ProjectNotFound) as raised:
        resolve_project(tenant=tenant, repo_url="acme/other", name="Beta")

    # then
    assert raised.value.message == "No active project matches this repo_url."


@pytest.mark.parametrize(
    ("_case", "identifiers"),
    [
        ("blank_slug_then_repo_url", {"slug": "", "repo_url": "acme/beta"}),
        ("whitespace_slug_then_repo_url", {"slug": "   ", "repo_url": "acme/beta"}),
        ("none_slug_then_repo_url", {"slug": None, "repo_url": "acme/beta"}),
        ("blank_slug_and_repo_url_then_name", {"slug": "", "repo_url": " ", "name": "Beta"}),
    ],
)
def test_blank_identifiers_count_as_absent(tenant, _case, identifiers):
    # given
    beta = ProjectFactory.create(tenant=tenant, name="Beta", repo_url="github.com/acme/beta")
    ProjectFactory.create(tenant=tenant, slug="alpha", name="Alpha")

    # when
    project = resolve_project(tenant=tenant, **identifiers)

    # then
    assert project == beta


# --- each identifier on its own ---------------------------------------------------------------


def test_slug_is_matched_exactly_after_lowercasing(tenant):
    # given
    alpha = ProjectFactory.create(tenant=tenant, slug="alpha")

    # when
    project = resolve_project(tenant=tenant, slug=" ALPHA ")

    # then
    assert project == alpha


def test_name_is_matched_case_insensitively(tenant):
    # given
    project = ProjectFactory.create(tenant=tenant, name="Payments Service")

    # when
    resolved = resolve_project(tenant=tenant, name="  payments SERVICE ")

    # then
    assert resolved == project


def test_name_must_match_whole_not_part(tenant):
    # given
    ProjectFactory.create(tenant=tenant, name="Payments Service")

    # when / then
    with pytest.raises(ProjectNotFound):
        resolve_project(tenant=tenant, name="Payments")


@pytest.mark.parametrize("registered_as", sorted(REPO_FORMS))
@pytest.mark.parametrize("looked_up_as", sorted(REPO_FORMS))
def test_every_repo_url_form_resolves_a_project_registered_in_any_form(
    tenant, registered_as, looked_up_as
):
    # given
    project = ProjectFactory.create(tenant=tenant, repo_url=REPO_FORMS[registered_as])
    ProjectFactory.create(tenant=tenant, repo_url="github.com/acme/other")

    # when
    resolved = resolve_project(tenant=tenant, repo_url=REPO_FORMS[looked_up_as])

    # then
    assert resolved == project


def test_a_url_with_another_host_does_not_match(tenant):
    # given
    ProjectFactory.create(tenant=tenant, repo_url="https://github.com/acme/api")

    # when / then
    with pytest.raises(ProjectNotFound):
        resolve_project(tenant=tenant, repo_url="https://gitlab.com/acme/api")


def test_a_bare_path_does_not_match_the_tail_of_a_longer_path(tenant):
    # given
    ProjectFactory.create(tenant=tenant, repo_url="https://gitlab.com/group/sub/repo")

    # when / then
    with pytest.raises(ProjectNotFound):
        resolve_project(tenant=tenant, repo_url="sub/repo")


def test_an_unparseable_repo_url_is_rejected_not_searched(tenant):
    # when / then
    with pytest.raises(InvalidRepoUrl):
        resolve_project(tenant=tenant, repo_url="not-a-repo", name="Beta")


# --- not found, no identifier -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("_case", "identifiers", "message"),
    [
        ("slug", {"slug": "missing"}, "No active project matches this slug."),
        ("repo_url", {"repo_url": "acme/missing"}, "No active project matches this repo_url."),
        ("name", {"name": "Missing"}, "No active project matches this name."),
    ],
)
def test_nothing_matching_is_not_found(tenant, _case, identifiers, message):
    # given
    ProjectFactory.create(tenant=tenant, slug="present", name="Present", repo_url="acme/present")

    # when
    with pytest.raises(ProjectNotFound) as raised:
        resolve_project(tenant=tenant, **identifiers)

    # then
    assert (raised.value.code, raised.value.http_status) == ("not_found", 404)
    assert raised.value.message == message


@pytest.mark.parametrize(
    ("_case", "identifiers"),
    [
        ("none_given", {}),
        ("all_none", {"slug": None, "repo_url": None, "name": None}),
        ("all_blank", {"slug": "", "repo_url": "  ", "name": "\t"}),
    ],
)
def test_no_identifier_is_rejected(tenant, _case, identifiers):
    # given
    ProjectFactory.create(tenant=tenant)

    # when
    with pytest.raises(NoIdentifier) as raised:
        resolve_project(tenant=tenant, **identifiers)

    # then
    assert (raised.value.code, raised.value.http_status) == ("no_identifier", 422)


# --- ambiguity --------------------------------------------------------------------------------


def test_a_repo_url_shared_by_two_active_projects_is_ambiguous(tenant):
    # given
    api = ProjectFactory.create(
        tenant=tenant, slug="api", name="API", repo_url="github.com/acme/mono"
    )
    web = ProjectFactory.create(tenant=tenant, slug="web", name="Web", repo_url="acme/mono")

    # when
    with pytest.raises(AmbiguousResolution) as raised:
        resolve_project(tenant=tenant, repo_url="git@github.com:acme/mono.git")

    # then
    assert (raised.value.code, raised.value.http_status) == ("ambiguous_resolution", 409)
    assert raised.value.details == {
        "identifier": "repo_url",
        "value": "git@github.com:acme/mono.git",
        "candidates": [
            {"id": str(api.id), "slug": "api", "name": "API"},
            {"id": str(web.id), "slug": "web", "name": "Web"},
        ],
    }


def test_a_bare_path_registered_under_two_hosts_is_ambiguous(tenant):
    # given
    ProjectFactory.create(tenant=tenant, repo_url="https://github.com/acme/api")
    ProjectFactory.create(tenant=tenant, repo_url="https://gitlab.com/acme/api")

    # when / then
    with pytest.raises(AmbiguousResolution):
        resolve_project(tenant=tenant, repo_url="acme/api")


def test_a_url_with_a_host_picks_that_host_among_same_paths(tenant):
    # given
    github = ProjectFactory.create(tenant=tenant, repo_url="https://github.com/acme/api")
    ProjectFactory.create(tenant=tenant, repo_url="https://gitlab.com/acme/api")

    # when
    resolved = resolve_project(tenant=tenant, repo_url="git@github.com:acme/api.git")

    # then
    assert resolved == github


def test_names_equal_but_for_case_are_ambiguous(tenant):
    # given
    first = ProjectFactory.create(tenant=tenant, slug="first", name="Billing")
    second = ProjectFactory.create(tenant=tenant, slug="second", name="BILLING")

    # when
    with pytest.raises(AmbiguousResolution) as raised:
        resolve_project(tenant=tenant, name="billing")

    # then
    assert sorted(candidate["id"] for candidate in raised.value.details["candidates"]) == sorted(
        [str(first.id), str(second.id)]
    )
    assert raised.value.details["identifier"] == "name"


def test_an_archived_twin_does_not_make_a_match_ambiguous(tenant):
    # given
    active = ProjectFactory.create(tenant=tenant, name="Billing", repo_url="acme/billing")
    ProjectFactory.create(
        tenant=tenant, name="Billing", repo_url="acme/billing", status=ProjectStatus.ARCHIVED
    )

    # when
    by_repo = resolve_project(tenant=tenant, repo_url="acme/billing")
    by_name = resolve_project(tenant=tenant, name="billing")

    # then
    assert (by_repo, by_name) == (active, active)


def test_another_tenants_twin_does_not_make_a_match_ambiguous(tenant, other_tenant):
    # given
    ours = ProjectFactory.create(tenant=tenant, name="Billing", repo_url="acme/billing")
    ProjectFactory.create(tenant=other_tenant, name="Billing", repo_url="acme/billing")

    # when
    by_repo = resolve_project(tenant=tenant, repo_url="acme/billing")
    by_name = resolve_project(tenant=tenant, name="Billing")

    # then
    assert (by_repo, by_name) == (ours, ours)


# --- archived and cross-tenant projects are never resolved ------------------------------------


IDENTIFIERS_OF_TARGET = [
    ("slug", {"slug": "target"}),
    ("repo_url", {"repo_url": "https://github.com/acme/target"}),
    ("name", {"name": "Target"}),
]


@pytest.mark.parametrize(("_case", "identifiers"), IDENTIFIERS_OF_TARGET)
def test_an_archived_project_is_not_resolved(tenant, _case, identifiers):
    # given
    ProjectFactory.create(
        tenant=tenant,
        slug="target",
        name="Target",
        repo_url="github.com/acme/target",
        status=ProjectStatus.ARCHIVED,
    )

    # when / then
    with pytest.raises(ProjectNotFound):
        resolve_project(tenant=tenant, **identifiers)


@pytest.mark.parametrize(("_case", "identifiers"), IDENTIFIERS_OF_TARGET)
def test_another_tenants_project_is_not_resolved(tenant, other_tenant, _case, identifiers):
    # given
    ProjectFactory.create(
        tenant=other_tenant, slug="target", name="Target", repo_url="github.com/acme/target"
    )

    # when / then
    with pytest.raises(ProjectNotFound):
        resolve_project(tenant=tenant, **identifiers)
