"""The deep read: full bodies of the top results plus the articles they link to."""

from __future__ import annotations

import pytest

from apps.knowledge.models import ArticleAccessEvent
from apps.knowledge.selectors import knowledge_context
from apps.knowledge.services import article_link_create, knowledge_search_record
from tests.knowledge.helpers import CURATOR, publish

pytestmark = pytest.mark.django_db


def test_results_come_with_bodies_and_their_visible_linked_articles(tenant, agent_viewer):
    # given
    freeze = publish(tenant, "Friday deploy freeze", "We do not deploy on Fridays.")
    oncall = publish(tenant, "On-call escalation", "Pages go to the primary first.")
    private = publish(
        tenant,
        "Private note",
        "Only agent-b reads this.",
        visibility="owner",
        owner_agent_id="agent-b",
    )
    for target in (oncall, private):
        article_link_create(
            tenant=tenant,
            viewer=CURATOR,
            from_article_id=freeze.pk,
            to_article_id=target.pk,
            kind="relates_to",
        )

    # when
    context = knowledge_context(tenant=tenant, viewer=agent_viewer, query="friday deploy", limit=1)

    # then
    assert [hit.article.title for hit in context.results] == ["Friday deploy freeze"]
    assert context.results[0].article.body == "We do not deploy on Fridays."
    assert [(v.kind, v.direction, v.other.title) for v in context.links[freeze.pk]] == [
        ("relates_to", "out", "On-call escalation")
    ]
    assert [article.title for article in context.linked] == ["On-call escalation"]
    assert context.meta["linked_count"] == 1
    # The deep read itself writes nothing; serving it records what its search surfaced.
    assert not ArticleAccessEvent.objects.exists()
    assert context.search.results == context.results
    knowledge_search_record(
        tenant=tenant, viewer=agent_viewer, api_key_id=None, result=context.search
    )
    assert list(ArticleAccessEvent.objects.values_list("article_id", "access_type")) == [
        (freeze.pk, "surfaced")
    ]
