"""An edit that changes an article's text goes through the novelty gate: it may not make the
article repeat another one the editor can read."""

from __future__ import annotations

import pytest

from apps.knowledge.exceptions import DuplicateEdit, GateUnavailable
from apps.knowledge.models import Article
from apps.knowledge.services import ArticleChanges, article_update
from tests.knowledge.helpers import break_embeddings, publish, table_rows
from tests.knowledge.services.test_propose_article import CONFLICTING, FREEZE, REWORDED, UNRELATED

pytestmark = pytest.mark.django_db


@pytest.fixture
def freeze(tenant):
    return publish(tenant, *FREEZE)


@pytest.fixture
def own(tenant):
    """agent-a's own published article, about something else."""
    return publish(tenant, *UNRELATED, owner_agent_id="agent-a")


def _edit(tenant, viewer, article, text):
    title, body = text
    return article_update(
        tenant=tenant,
        viewer=viewer,
        article_id=article.pk,
        version=article.version,
        changes=ArticleChanges(title=f"{title} (mine)", body=body),
    )


@pytest.mark.parametrize(
    ("_case", "text", "code"),
    [
        ("the same body", FREEZE, "duplicate"),
        ("a paraphrase above the dedupe threshold", REWORDED, "deduplicated"),
    ],
)
def test_an_agent_edit_that_repeats_another_article_is_refused_and_changes_nothing(
    tenant, agent_viewer, freeze, own, _case, text, code
):
    # given
    before = table_rows()

    # when
    with pytest.raises(DuplicateEdit) as raised:
        _edit(tenant, agent_viewer, own, text)

    # then
    assert (raised.value.http_status, raised.value.code) == (409, code)
    assert raised.value.details["article_id"] == str(freeze.pk)
    assert table_rows() == before


def test_an_agent_edit_below_the_dedupe_threshold_applies_with_the_gates_vector(
    tenant, agent_viewer, freeze, own, mocker
):
    # given: a related text the gate would have drafted, not refused
    delay = mocker.patch("apps.knowledge.queue.EMBED_ARTICLES.delay")

    # when
    updated = _edit(tenant, agent_viewer, own, CONFLICTING)

    # then: applied, with the vector the gate computed (no second embedding queued)
    stored = Article.objects.get(pk=own.pk)
    assert (stored.body, stored.version, updated.version) == (CONFLICTING[1], 2, 2)
    assert stored.embedding is not None
    assert stored.embedded_at is not None
    delay.assert_not_called()


def test_an_agent_may_keep_editing_its_article_which_is_never_its_own_duplicate(
    tenant, agent_viewer, own
):
    updated = _edit(tenant, agent_viewer, own, (UNRELATED[0], UNRELATED[1] + " Fixed in 2.3."))

    assert updated.body == UNRELATED[1] + " Fixed in 2.3."


def test_a_curator_edit_is_refused_only_for_the_same_body(tenant, curator, freeze, own):
    # when: a paraphrase passes (curators are not similarity-gated, as on create) ...
    paraphrased = _edit(tenant, curator, own, REWORDED)
    before = table_rows()
    # ... the same body does not
    with pytest.raises(DuplicateEdit) as raised:
        _edit(tenant, curator, paraphrased, FREEZE)

    # then
    assert (raised.value.code, raised.value.details) == (
        "duplicate",
        {"article_id": str(freeze.pk)},
    )
    assert table_rows() == before


def test_an_agent_text_edit_falls_open_without_writing_while_embeddings_are_down(
    tenant, agent_viewer, own
):
    break_embeddings(tenant)
    before = table_rows()

    with pytest.raises(GateUnavailable) as raised:
        _edit(tenant, agent_viewer, own, CONFLICTING)

    assert (raised.value.http_status, raised.value.code) == (503, "gate_unavailable")
    assert table_rows() == before


def test_the_patch_api_answers_the_gates_code(tenant, agent, freeze, own):
    response = agent.patch(
        f"/api/v1/knowledge/articles/{own.pk}",
        {"version": 1, "body": FREEZE[1]},
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "duplicate"
    assert response.json()["error"]["details"] == {"article_id": str(freeze.pk)}
