import pytest

from apps.projects.exceptions import InvalidRepoUrl
from apps.projects.repo_urls import RepoRef, normalize_repo_url


@pytest.mark.parametrize(
    ("_case", "raw", "expected"),
    [
        ("scp_like_ssh", "git@github.com:owner/repo.git", RepoRef("github.com", "owner/repo")),
        (
            "scp_like_without_suffix",
            "git@github.com:owner/repo",
            RepoRef("github.com", "owner/repo"),
        ),
        ("scp_like_without_user", "github.com:owner/repo.git", RepoRef("github.com", "owner/repo")),
        ("https", "https://github.com/owner/repo", RepoRef("github.com", "owner/repo")),
        (
            "https_git_suffix",
            "https://github.com/owner/repo.git",
            RepoRef("github.com", "owner/repo"),
        ),
        (
            "https_trailing_slash",
            "https://github.com/owner/repo/",
            RepoRef("github.com", "owner/repo"),
        ),
        ("http", "http://github.com/owner/repo", RepoRef("github.com", "owner/repo")),
        (
            "ssh_url_with_port",
            "ssh://git@github.com:22/owner/repo.git",
            RepoRef("github.com", "owner/repo"),
        ),
        (
            "https_with_credentials",
            "https://user:token@github.com/owner/repo",
            RepoRef("github.com", "owner/repo"),
        ),
        (
            "https_query_and_fragment",
            "https://github.com/owner/repo?tab=readme#top",
            RepoRef("github.com", "owner/repo"),
        ),
        ("www_prefix", "https://www.github.com/owner/repo", RepoRef("github.com", "owner/repo")),
        ("uppercase", "HTTPS://GitHub.COM/Owner/Repo.GIT", RepoRef("github.com", "owner/repo")),
        (
            "surrounding_whitespace",
            "  https://github.com/owner/repo  ",
            RepoRef("github.com", "owner/repo"),
        ),
        ("host_without_scheme", "github.com/owner/repo", RepoRef("github.com", "owner/repo")),
        ("bare_owner_repo", "owner/repo", RepoRef("", "owner/repo")),
        ("bare_git_suffix_and_slashes", "/Owner/Repo.git/", RepoRef("", "owner/repo")),
        (
            "gitlab_subgroup",
            "https://gitlab.com/group/sub/repo.git",
            RepoRef("gitlab.com", "group/sub/repo"),
        ),
        ("self_hosted_localhost", "localhost/owner/repo", RepoRef("localhost", "owner/repo")),
        ("doubled_slashes", "https://github.com//owner//repo", RepoRef("github.com", "owner/repo")),
    ],
)
def test_normalize_repo_url_accepts_every_spelling(_case, raw, expected):
    # when
    ref = normalize_repo_url(raw)

    # then
    assert ref == expected


def test_canonical_joins_host_and_path_and_omits_a_missing_host():
    assert RepoRef("github.com", "owner/repo").canonical == "github.com/owner/repo"
    assert RepoRef("", "owner/repo").canonical == "owner/repo"


@pytest.mark.parametrize(
    "raw",
    [
        "git@github.com:owner/repo.git",
        "https://github.com/owner/repo",
        "owner/repo",
        "https://gitlab.com/group/sub/repo.git",
    ],
)
def test_normalising_a_canonical_form_changes_nothing(raw):
    # given
    canonical = normalize_repo_url(raw).canonical

    # when
    again = normalize_repo_url(canonical)

    # then
    assert again.canonical == canonical


@pytest.mark.parametrize(
    ("_case", "raw"),
    [
        ("empty", ""),
        ("whitespace", "   "),
        ("single_segment", "repo"),
        ("host_only", "https://github.com"),
        ("host_and_owner_only", "https://github.com/owner"),
        ("scheme_without_host", "file:///srv/git/repo.git"),
        ("scp_like_without_path", "git@github.com:"),
        ("only_git_suffix", "owner/.git"),
        ("dot_segment", "owner/../repo"),
        ("inner_whitespace", "owner/my repo"),
    ],
)
def test_normalize_repo_url_rejects_values_without_a_repository(_case, raw):
    # when
    with pytest.raises(InvalidRepoUrl) as raised:
        normalize_repo_url(raw)

    # then
    assert raised.value.code == "invalid_repo_url"
    assert raised.value.http_status == 422
    assert raised.value.details == {"repo_url": raw}
