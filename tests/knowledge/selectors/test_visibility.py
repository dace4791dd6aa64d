"""Who sees which article: the visibility matrix, through every read that filters on it."""

from __future__ import annotations

import uuid

import pytest

from apps.knowledge.exceptions import ArticleNotFound
from apps.knowledge.selectors import article_get, article_list, visible_article_ids
from apps.knowledge.viewer import Viewer
from apps.tenancy.models import ApiKeyRole
from tests.knowledge.helpers import publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def matrix(tenant):
    """One article of every kind an agent must or must not see."""
    return {
        "shared": publish(tenant, "Shared published", embed=False),
        "shared_draft": publish(tenant, "Someone's draft", status="draft", embed=False),
        "own_draft": publish(
            tenant, "My draft", status="draft", owner_agent_id="agent-a", embed=False
        ),
        "own_private": publish(
            tenant, "My private", visibility="owner", owner_agent_id="agent-a", embed=False
        ),
        "own_private_draft": publish(
            tenant,
            "My private draft",
            visibility="owner",
            owner_agent_id="agent-a",
            status="draft",
            embed=False,
        ),
        "others_private": publish(
            tenant, "Their private", visibility="owner", owner_agent_id="agent-b", embed=False
        ),
        "others_draft": publish(
            tenant, "Their draft", status="draft", owner_agent_id="agent-b", embed=False
        ),
        "archived": publish(tenant, "Archived", status="archived", embed=False),
        "own_archived": publish(
            tenant, "My archived", status="archived", owner_agent_id="agent-a", embed=False
        ),
    }


AGENT_SEES = {"shared", "own_draft", "own_private", "own_private_draft"}
CURATOR_SEES = {
    "shared",
    "shared_draft",
    "own_draft",
    "own_private",
    "own_private_draft",
    "others_private",
    "others_draft",
}


def _names(matrix, ids) -> set[str]:
    by_id = {article.pk: name for name, article in matrix.items()}
    return {by_id[pk] for pk in ids}


@pytest.mark.parametrize(
    ("_case", "viewer", "expected"),
    [
        ("agent", Viewer.for_subject("agent-a"), AGENT_SEES),
        (
            "other_agent",
            Viewer.for_subject("agent-b"),
            {"shared", "others_private", "others_draft"},
        ),
        ("user", Viewer(role=ApiKeyRole.USER, subject_id="k1"), CURATOR_SEES),
        ("orchestrator", Viewer(role=ApiKeyRole.ORCHESTRATOR, subject_id="k2"), CURATOR_SEES),
        ("superadmin", Viewer(role=ApiKeyRole.SUPERADMIN, subject_id="k3"), CURATOR_SEES),
    ],
)
def test_visible_article_ids_follows_the_matrix(tenant, matrix, _case, viewer, expected):
    # when
    ids = visible_article_ids(
        tenant=tenant, viewer=viewer, ids=[article.pk for article in matrix.values()]
    )

    # then
    assert _names(matrix, ids) == expected


def test_visible_article_ids_drops_unknown_malformed_and_foreign_ids(tenant, other_tenant, curator):
    # given
    ours = publish(tenant, "Ours", embed=False)
    theirs = publish(other_tenant, "Theirs", embed=False)

    # when
    ids = visible_article_ids(
        tenant=tenant,
        viewer=curator,
        ids=[str(ours.pk), theirs.pk, uuid.uuid4(), "not-a-uuid", None, 42],
    )

    # then
    assert ids == {ours.pk}


def test_an_agent_with_a_blank_subject_owns_nothing(tenant, matrix):
    # given: an unowned draft must not count as "own" for an empty subject
    viewer = Viewer(role=ApiKeyRole.AGENT, subject_id="")

    # when
    ids = visible_article_ids(
        tenant=tenant, viewer=viewer, ids=[article.pk for article in matrix.values()]
    )

    # then
    assert _names(matrix, ids) == {"shared"}


@pytest.mark.parametrize(
    "name", sorted({"shared_draft", "others_private", "others_draft", "archived", "own_archived"})
)
def test_an_agent_gets_the_same_404_for_invisible_and_missing(tenant, matrix, agent_viewer, name):
    # when / then
    with pytest.raises(ArticleNotFound):
        article_get(tenant=tenant, viewer=agent_viewer, article_id=matrix[name].pk)


def test_a_curator_can_read_an_archived_article_by_id(tenant, matrix, curator):
    # when
    article = article_get(tenant=tenant, viewer=curator, article_id=matrix["archived"].pk)

    # then
    assert article.title == "Archived"


def test_another_tenants_article_is_not_found(other_tenant, matrix, curator):
    # when / then
    with pytest.raises(ArticleNotFound):
        article_get(tenant=other_tenant, viewer=curator, article_id=matrix["shared"].pk)


def test_list_shows_archived_only_to_curators_who_ask(tenant, matrix, curator, agent_viewer):
    # when
    default = article_list(tenant=tenant, viewer=curator)
    archived = article_list(tenant=tenant, viewer=curator, status="archived")
    agent_archived = article_list(tenant=tenant, viewer=agent_viewer, status="archived")

    # then
    assert _names(matrix, [a.pk for a in default.results]) == CURATOR_SEES
    assert [a.title for a in archived.results] == ["Archived", "My archived"]
    assert agent_archived.results == []
    assert default.meta == {"total_count": 7, "limit": 50, "offset": 0}
