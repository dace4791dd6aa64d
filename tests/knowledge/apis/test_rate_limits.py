"""The wiki's rate limits: writes that embed a whole article share one bucket, and the deep
read shares the recall bucket with every other read by meaning."""

from __future__ import annotations

import pytest

from apps.knowledge.models import Article, ArticleAccessEvent
from apps.memory.models import Memory
from tests.knowledge.helpers import BASE, article_url, publish, table_rows

pytestmark = pytest.mark.django_db

DAY = 86_400


def _article(title: str) -> dict:
    return {"title": title, "body": f"What we learned about {title}.", "category": "finding"}


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def test_article_creates_and_updates_share_the_embedding_write_bucket(agent, settings):
    settings.EMBEDDING_WRITE_RATE_LIMIT = 2
    # Windows are fixed; a day-long one keeps a window boundary out of this test.
    settings.EMBEDDING_WRITE_RATE_WINDOW_SECONDS = DAY
    created = agent.post(f"{BASE}/articles", _article("Friday deploys"))
    article_id = created.json()["data"]["article"]["id"]
    edited = agent.patch(article_url(article_id), {"version": 1, "body": "Never on Fridays."})
    before = table_rows()

    refused_create = agent.post(f"{BASE}/articles", _article("Tabs or spaces"))
    refused_edit = agent.patch(article_url(article_id), {"version": 2, "body": "Only hotfixes."})

    assert (created.status_code, edited.status_code) == (201, 200)
    for refused in (refused_create, refused_edit):
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert refused.json()["error"]["details"]["bucket"] == "embedding-write"
        assert 1 <= int(refused["Retry-After"]) <= DAY + 1
    assert table_rows() == before
    assert Article.objects.get().version == 2


def test_the_embedding_write_bucket_leaves_memory_writes_alone(agent, settings):
    settings.EMBEDDING_WRITE_RATE_LIMIT = 1
    settings.EMBEDDING_WRITE_RATE_WINDOW_SECONDS = DAY
    assert agent.post(f"{BASE}/articles", _article("Friday deploys")).status_code == 201
    assert agent.post(f"{BASE}/articles", _article("Tabs")).status_code == 429

    response = agent.post("/api/v1/memory", {"text": "Deploys are frozen on Fridays."})

    assert response.status_code == 201
    assert Memory.objects.count() == 1


def test_each_subject_has_its_own_embedding_write_bucket(agent, other_agent, settings):
    settings.EMBEDDING_WRITE_RATE_LIMIT = 1
    settings.EMBEDDING_WRITE_RATE_WINDOW_SECONDS = DAY
    assert agent.post(f"{BASE}/articles", _article("Friday deploys")).status_code == 201

    response = other_agent.post(f"{BASE}/articles", _article("Tabs or spaces"))

    assert response.status_code == 201
    assert Article.objects.count() == 2


def test_the_deep_read_shares_the_recall_bucket(tenant, agent, settings):
    settings.RECALL_RATE_LIMIT = 1
    settings.RECALL_RATE_WINDOW_SECONDS = DAY
    publish(tenant, "Friday deploy freeze", "No deploys after 14:00 UTC on Fridays.")
    assert agent.post(f"{BASE}/search", {"query": "deploy freeze"}).status_code == 200
    events = ArticleAccessEvent.objects.count()

    response = agent.client.get(f"{BASE}/context", {"query": "deploy freeze"})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert response.json()["error"]["details"]["bucket"] == "recall"
    assert ArticleAccessEvent.objects.count() == events


def test_an_article_open_counts_in_the_recall_bucket(tenant, agent, settings):
    settings.RECALL_RATE_LIMIT = 1
    settings.RECALL_RATE_WINDOW_SECONDS = DAY
    article = publish(tenant, "Friday deploy freeze", "No deploys after 14:00 UTC on Fridays.")
    assert agent.get(article_url(article.pk)).status_code == 200

    response = agent.get(article_url(article.pk))

    assert response.status_code == 429
    assert response.json()["error"]["details"]["bucket"] == "recall"
    assert ArticleAccessEvent.objects.count() == 1
