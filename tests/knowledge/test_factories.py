"""The article factory builds rows search treats exactly as service-written ones."""

from __future__ import annotations

import pytest

from apps.knowledge.models import ArticleStatus
from apps.knowledge.selectors import knowledge_search
from tests.knowledge.factories import ArticleFactory
from tests.knowledge.helpers import publish

pytestmark = pytest.mark.django_db


def test_a_factory_article_satisfies_every_model_check(tenant):
    published = ArticleFactory.create(tenant=tenant)
    draft = ArticleFactory.create(tenant=tenant, status=ArticleStatus.DRAFT)

    for article in (published, draft):
        article.full_clean()
    assert published.published_at is not None
    assert draft.published_at is None
    assert published.embedding is None


def test_an_embedded_factory_article_carries_the_vector_the_service_writes(tenant, other_tenant):
    written = publish(other_tenant, "Friday deploy freeze", "No deploys after 14:00 on Fridays.")

    made = ArticleFactory.create(
        tenant=tenant,
        title="Friday deploy freeze",
        body="No deploys after 14:00 on Fridays.",
        embedded=True,
    )

    assert made.embedded_at is not None
    assert made.embedding_content_hash == written.embedding_content_hash
    assert list(made.embedding) == pytest.approx(list(written.embedding), abs=1e-6)


def test_search_finds_embedded_and_pending_factory_articles_by_their_own_legs(tenant, agent_viewer):
    embedded = ArticleFactory.create(
        tenant=tenant, title="Deploy freeze", body="No deploys on Fridays.", embedded=True
    )
    pending = ArticleFactory.create(
        tenant=tenant, title="Deploy checklist", body="Steps for every deploy."
    )

    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")

    reasons = {hit.article.pk: hit.selection_reason for hit in result.results}
    assert set(reasons) == {embedded.pk, pending.pk}
    assert "semantic" in reasons[embedded.pk]
    assert reasons[pending.pk] == "keyword"
