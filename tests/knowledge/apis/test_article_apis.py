"""The article endpoints: verdict status codes, filters, opened events, versioned edits."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.fields import DateTimeField

from apps.knowledge.models import Article, ArticleAccessEvent
from tests.knowledge.helpers import BASE, article_url, break_embeddings, error, publish, table_rows
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

FREEZE = {
    "title": "Friday deploy freeze",
    "body": "We do not deploy to production after 14:00 UTC on Fridays. Hotfixes for incidents "
    "are the only exception, and they need a second reviewer on call.",
    "category": "decision",
    "tags": ["deploy"],
}


def summary_json(article: Article) -> dict:
    article.refresh_from_db()
    stamp = DateTimeField().to_representation
    return {
        "id": str(article.pk),
        "title": article.title,
        "category": article.category,
        "tags": article.tags,
        "status": article.status,
        "visibility": article.visibility,
        "owner_agent_id": article.owner_agent_id,
        "source": article.source,
        "source_memory_id": None,
        "project_id": str(article.project_id) if article.project_id else None,
        "version": article.version,
        "published_at": stamp(article.published_at) if article.published_at else None,
        "embedding_status": "ready" if article.embedded_at else "pending",
        "created_at": stamp(article.created_at),
        "updated_at": stamp(article.updated_at),
    }


def test_an_agents_novel_article_is_created_through_the_gate(agent):
    # when
    response = agent.post(f"{BASE}/articles", FREEZE)

    # then
    article = Article.objects.get()
    assert response.status_code == 201
    assert response.json() == {
        "data": {"verdict": "created", "created": True, "article": summary_json(article)},
        "meta": {},
    }
    assert (article.owner_agent_id, article.source, article.status) == (
        "agent-a",
        "agent",
        "published",
    )


def test_an_agents_duplicate_is_200_with_the_canonical_article(agent):
    # given
    first = agent.post(f"{BASE}/articles", FREEZE).json()["data"]["article"]
    before = table_rows()

    # when
    response = agent.post(f"{BASE}/articles", {**FREEZE, "title": "Freeze, again"})

    # then
    assert response.status_code == 200
    assert response.json()["data"]["verdict"] == "duplicate"
    assert response.json()["data"]["created"] is False
    assert response.json()["data"]["article"]["id"] == first["id"]
    assert table_rows() == before


def test_an_agents_near_duplicate_is_201_gated_to_draft(agent):
    # given
    agent.post(f"{BASE}/articles", FREEZE)

    # when
    response = agent.post(
        f"{BASE}/articles",
        {
            "title": "Thursday deploy freeze",
            "body": "We do not deploy to production after 16:00 UTC on Thursdays. Hotfixes for "
            "incidents are the only exception.",
            "category": "decision",
        },
    )

    # then
    assert response.status_code == 201
    assert response.json()["data"]["verdict"] == "gated_to_draft"
    assert response.json()["data"]["article"]["status"] == "draft"


def test_the_gate_falling_open_is_503_and_writes_nothing(tenant, agent):
    # given
    break_embeddings(tenant)
    before = table_rows()

    # when
    response = agent.post(f"{BASE}/articles", FREEZE)

    # then
    assert response.status_code == 503
    assert response.json() == error(
        "gate_unavailable",
        "The novelty gate cannot run while embeddings are unavailable; nothing was written. "
        "Retry once they recover.",
        {"reason": "provider_error"},
    )
    assert table_rows() == before


def test_an_article_past_the_authors_quota_is_409_and_writes_nothing(
    agent, other_agent, user, settings
):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 1
    assert agent.post(f"{BASE}/articles", FREEZE).status_code == 201
    before = table_rows()

    refused = agent.post(f"{BASE}/articles", {**FREEZE, "title": "Other", "body": "Other body."})

    assert refused.status_code == 409
    assert refused.json() == error(
        "article_quota_exceeded",
        "This author stores 1 of 1 articles; nothing was written.",
        {"scope": "author", "quota": 1, "stored": 1},
    )
    assert table_rows() == before
    theirs = {**FREEZE, "title": "Theirs", "body": "Unrelated notes on invoices."}
    assert other_agent.post(f"{BASE}/articles", theirs).status_code == 201
    curated = {**FREEZE, "title": "Curated", "body": "Curated notes on releases."}
    assert user.post(f"{BASE}/articles", curated).status_code == 201


def test_a_curator_creates_a_draft_directly(user):
    # when
    response = user.post(f"{BASE}/articles", {**FREEZE, "status": "draft"})

    # then
    assert response.status_code == 201
    data = response.json()["data"]
    assert (data["verdict"], data["article"]["status"], data["article"]["source"]) == (
        "created",
        "draft",
        "manual",
    )
    assert data["article"]["embedding_status"] == "pending"


def test_an_agent_cannot_choose_its_status(agent):
    # when
    response = agent.post(f"{BASE}/articles", {**FREEZE, "status": "draft"})

    # then: the gate decides
    assert response.json()["data"]["article"]["status"] == "published"


def test_a_taken_title_is_409(user):
    # given
    user.post(f"{BASE}/articles", FREEZE)
    before = table_rows()

    # when
    response = user.post(f"{BASE}/articles", {**FREEZE, "body": "Something else entirely."})

    # then
    assert response.status_code == 409
    assert response.json() == error(
        "title_taken",
        "An article you can see already has this title.",
        {"title": "Friday deploy freeze"},
    )
    assert table_rows() == before


@pytest.mark.parametrize(
    ("_case", "payload", "code"),
    [
        ("missing_title", {"body": "b", "category": "finding"}, "validation_error"),
        ("bad_category", {"title": "t", "body": "b", "category": "gossip"}, "validation_error"),
        ("blank_body", {"title": "t", "body": "   ", "category": "finding"}, "invalid_article"),
        (
            "foreign_project",
            {"title": "t", "body": "b", "category": "finding", "project_id": str(uuid.uuid4())},
            "invalid_project_id",
        ),
    ],
)
def test_invalid_writes_are_422_and_write_nothing(agent, _case, payload, code):
    # given
    before = table_rows()

    # when
    response = agent.post(f"{BASE}/articles", payload)

    # then
    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert table_rows() == before


def test_the_list_filters_and_paginates(tenant, user):
    # given
    project = ProjectFactory.create(tenant=tenant)
    publish(tenant, "Alpha", "deploy pipeline", category="pattern", tags=["ci"])
    publish(tenant, "Beta", "redis cache", category="decision", tags=["ci", "redis"])
    publish(tenant, "Gamma", "project notes", category="decision", project_id=project.pk)
    publish(tenant, "Delta", "old", status="archived")

    def listed(**params):
        response = user.client.get(f"{BASE}/articles", params)
        assert response.status_code == 200
        return [row["title"] for row in response.json()["data"]]

    # then
    assert listed() == ["Alpha", "Beta", "Gamma"]
    assert listed(category="decision") == ["Beta", "Gamma"]
    assert listed(tag="CI") == ["Alpha", "Beta"]
    assert listed(q="redis") == ["Beta"]
    assert listed(status="archived") == ["Delta"]
    assert listed(project_id=str(uuid.uuid4())) == ["Alpha", "Beta"]
    assert listed(project_id=str(project.pk)) == ["Alpha", "Beta", "Gamma"]
    page = user.client.get(f"{BASE}/articles", {"limit": 1, "offset": 1}).json()
    assert ([row["title"] for row in page["data"]], page["meta"]) == (
        ["Beta"],
        {"total_count": 3, "limit": 1, "offset": 1},
    )
    assert "body" not in page["data"][0]


def test_reading_an_article_returns_its_body_and_links_and_records_opened(tenant, agent):
    # given: a search of the caller's surfaced it
    article = publish(tenant, "Alpha", "The body.")
    search_id = agent.post(f"{BASE}/search", {"query": "Alpha body"}).json()["meta"]["search_id"]

    # when
    response = agent.client.get(article_url(article.pk), {"search_id": search_id})

    # then
    assert response.status_code == 200
    assert response.json() == {
        "data": {**summary_json(article), "body": "The body.", "links": []},
        "meta": {},
    }
    assert list(
        ArticleAccessEvent.objects.filter(access_type="opened").values_list(
            "article_id", "access_type", "search_id", "api_key_id", "subject_id"
        )
    ) == [(article.pk, "opened", uuid.UUID(search_id), agent.key.pk, "agent-a")]


def test_an_open_naming_a_search_not_the_callers_is_422_and_records_nothing(
    tenant, agent, other_agent
):
    # given: agent-b's search surfaced the article; agent-a names it, or makes one up
    article = publish(tenant, "Alpha", "The body.")
    theirs = other_agent.post(f"{BASE}/search", {"query": "Alpha body"}).json()["meta"]
    before = table_rows()

    # when
    responses = [
        agent.client.get(article_url(article.pk), {"search_id": search_id})
        for search_id in (theirs["search_id"], str(uuid.uuid4()))
    ]

    # then
    for response in responses:
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "not_surfaced"
    assert table_rows() == before


def test_an_invisible_article_is_the_same_404_as_a_missing_one_and_records_nothing(tenant, agent):
    # given
    draft = publish(tenant, "Someone's draft", status="draft")

    # when
    invisible = agent.get(article_url(draft.pk))
    missing = agent.get(article_url(uuid.uuid4()))
    malformed = agent.get(f"{BASE}/articles/not-a-uuid")

    # then
    assert invisible.status_code == missing.status_code == malformed.status_code == 404
    assert invisible.json() == missing.json() == error("not_found", "Article not found.")
    assert ArticleAccessEvent.objects.count() == 0


def test_an_edit_needs_the_version_you_read(tenant, user):
    # given
    article = publish(tenant, "Alpha", "v1")

    # when
    ok = user.patch(article_url(article.pk), {"version": 1, "body": "v2"})
    stale = user.patch(article_url(article.pk), {"version": 1, "body": "v3"})
    missing_version = user.patch(article_url(article.pk), {"body": "v4"})

    # then
    assert ok.status_code == 200
    assert (ok.json()["data"]["version"], ok.json()["data"]["body"]) == (2, "v2")
    assert stale.status_code == 409
    assert stale.json() == error(
        "version_conflict",
        "The article changed since you read it; re-read it and retry.",
        {"current_version": 2, "your_version": 1},
    )
    assert missing_version.status_code == 422
    assert Article.objects.get(pk=article.pk).body == "v2"


def test_an_agent_may_not_edit_another_authors_article(tenant, agent):
    # given
    article = publish(tenant, "Alpha", "v1")
    before = table_rows()

    # when
    response = agent.patch(article_url(article.pk), {"version": 1, "body": "mine now"})

    # then
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_article_owner"
    assert table_rows() == before


def test_patch_can_move_an_article_to_the_global_partition(tenant, user):
    # given
    project = ProjectFactory.create(tenant=tenant)
    article = publish(tenant, "Alpha", "v1", project_id=project.pk)

    # when
    response = user.patch(article_url(article.pk), {"version": 1, "project_id": None})

    # then
    assert response.status_code == 200
    assert response.json()["data"]["project_id"] is None


def test_archive_then_the_article_is_gone_for_agents(tenant, user, agent):
    # given
    article = publish(tenant, "Alpha", "v1")

    # when
    deleted = user.delete(article_url(article.pk))

    # then
    assert deleted.status_code == 204
    assert agent.get(article_url(article.pk)).status_code == 404
    assert user.get(article_url(article.pk)).json()["data"]["status"] == "archived"


def test_publish_a_draft(tenant, orchestrator):
    # given
    draft = publish(tenant, "Alpha", "v1", status="draft")

    # when
    response = orchestrator.post(f"{article_url(draft.pk)}/publish")

    # then
    assert response.status_code == 200
    assert (response.json()["data"]["status"], response.json()["data"]["version"]) == (
        "published",
        2,
    )
