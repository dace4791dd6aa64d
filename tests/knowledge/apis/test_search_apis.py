"""The read endpoints: search (shape, query contract, degradation), context, metrics."""

from __future__ import annotations

import uuid

import pytest
from drf_spectacular.generators import SchemaGenerator

from apps.knowledge.models import ArticleAccessEvent
from apps.knowledge.selectors import knowledge_search
from apps.knowledge.services import knowledge_search_record, record_referenced
from apps.knowledge.viewer import Viewer
from apps.tenancy.services import tenant_halt
from tests.knowledge.helpers import BASE, CURATOR, break_embeddings, error, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def wiki(tenant):
    return [
        publish(tenant, "Friday deploy freeze", "We do not deploy on Fridays.", tags=["deploy"]),
        publish(tenant, "Redis is a cache", "Anything only in Redis may vanish."),
    ]


def test_search_returns_summaries_with_reasons_and_the_full_meta(tenant, wiki, agent):
    # when
    response = agent.post(f"{BASE}/search", {"query": "deploy on fridays", "limit": 5})

    # then
    assert response.status_code == 200
    body = response.json()
    first = body["data"][0]
    assert first == {
        "id": str(wiki[0].pk),
        "title": "Friday deploy freeze",
        "category": "finding",
        "tags": ["deploy"],
        "score": 1.0,
        "snippet": "We do not deploy on Fridays.",
        "selection_reason": "keyword+semantic",
        "rank": 1,
    }
    meta = body["meta"]
    assert set(meta) == {
        "search_id",
        "total_count",
        "limit",
        "offset",
        "mode",
        "pool",
        "degraded",
        "degraded_reason",
        "provenance",
        "confidence",
        "answer_confidence",
        "answer_separation",
        "keyword_mode",
        "ann_iterative_scan",
        "diversity",
    }
    assert (meta["total_count"], meta["limit"], meta["mode"], meta["degraded"]) == (
        2,
        5,
        "reorder",
        False,
    )
    surfaced = set(ArticleAccessEvent.objects.values_list("article_id", "search_id", "api_key_id"))
    assert surfaced == {
        (article.pk, uuid.UUID(meta["search_id"]), agent.key.pk) for article in wiki
    }


def test_search_degrades_to_keywords_when_embeddings_are_down(tenant, wiki, agent):
    # given
    break_embeddings(tenant)

    # when
    response = agent.post(f"{BASE}/search", {"query": "redis"})

    # then
    assert response.status_code == 200
    assert [row["selection_reason"] for row in response.json()["data"]] == ["keyword_fallback"]
    assert (response.json()["meta"]["degraded"], response.json()["meta"]["degraded_reason"]) == (
        True,
        "provider_error",
    )


@pytest.mark.parametrize(
    ("_case", "query", "code", "message"),
    [
        ("number", 5, "invalid_query", "query must be a non-blank string."),
        ("null", None, "invalid_query", "query must be a non-blank string."),
        ("object", {"q": "x"}, "invalid_query", "query must be a non-blank string."),
        ("blank", "   ", "invalid_query", "query must be a non-blank string."),
        ("too_long", "y" * 501, "query_too_long", "query is longer than 500 characters."),
    ],
)
def test_search_validates_the_query_before_embedding(agent, mocker, _case, query, code, message):
    # given
    spy = mocker.patch("apps.knowledge.selectors.search.embed_query_cached")

    # when
    response = agent.post(f"{BASE}/search", {"query": query})

    # then
    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"] == message
    assert spy.call_count == 0


def test_a_missing_query_is_a_validation_error(agent):
    response = agent.post(f"{BASE}/search", {})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize(("_case", "session_id"), [("number", 12), ("too_long", "s" * 201)])
def test_search_refuses_a_bad_session_id(wiki, agent, _case, session_id):
    # when
    response = agent.post(f"{BASE}/search", {"query": "deploy", "session_id": session_id})

    # then
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"
    assert ArticleAccessEvent.objects.count() == 0


def test_context_returns_full_bodies_and_links(tenant, wiki, user):
    # when
    response = user.client.get(f"{BASE}/context", {"query": "friday deploy freeze", "limit": 1})

    # then
    assert response.status_code == 200
    data = response.json()["data"]
    assert [row["title"] for row in data["results"]] == ["Friday deploy freeze"]
    assert data["results"][0]["body"] == "We do not deploy on Fridays."
    assert (data["results"][0]["selection_reason"], data["results"][0]["links"]) == (
        "keyword+semantic",
        [],
    )
    assert data["linked"] == []
    assert response.json()["meta"]["provenance"] == "curated"


def test_context_without_a_query_is_invalid(user):
    response = user.client.get(f"{BASE}/context")
    assert response.status_code == 422
    assert response.json() == error("invalid_query", "query must be a non-blank string.")


def test_context_by_post_takes_the_query_in_its_body_and_answers_as_the_get(tenant, wiki, user):
    # given
    query = {"query": "friday deploy freeze", "limit": 1}

    # when
    posted = user.post(f"{BASE}/context", query)
    got = user.client.get(f"{BASE}/context", query)

    # then: the same answer (each a search of its own, so its own search id)
    assert posted.status_code == 200
    assert posted.json()["meta"].pop("search_id") != got.json()["meta"].pop("search_id")
    assert posted.json()["data"] == got.json()["data"]
    assert [row["title"] for row in posted.json()["data"]["results"]] == ["Friday deploy freeze"]
    assert ArticleAccessEvent.objects.filter(access_type="surfaced").count() == 2


@pytest.mark.parametrize(
    ("_case", "body", "code"),
    [
        ("missing", {}, "validation_error"),
        ("blank", {"query": "  "}, "invalid_query"),
        ("too long", {"query": "q" * 501}, "query_too_long"),
    ],
)
def test_context_by_post_refuses_a_bad_query_and_records_nothing(user, wiki, _case, body, code):
    response = user.post(f"{BASE}/context", body)

    assert (response.status_code, response.json()["error"]["code"]) == (422, code)
    assert ArticleAccessEvent.objects.count() == 0


def test_context_by_post_is_not_frozen_by_a_custody_halt(tenant, wiki, agent):
    tenant_halt(tenant=tenant, reason="audit")

    response = agent.post(f"{BASE}/context", {"query": "friday deploy freeze"})

    assert response.status_code == 200


def test_the_schema_marks_the_get_deprecated_and_documents_the_post():
    operations = SchemaGenerator().get_schema(request=None, public=True)["paths"][
        "/api/v1/knowledge/context"
    ]

    assert (operations["get"]["operationId"], operations["get"].get("deprecated")) == (
        "legacy_knowledge_context",
        True,
    )
    assert (operations["post"]["operationId"], operations["post"].get("deprecated")) == (
        "knowledge_context",
        None,
    )
    body = operations["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/KnowledgeContextInputRequest"}


def test_metrics_report_the_funnel_of_distinct_pairs(tenant, wiki, user, agent):
    # given: one search of agent-a's surfacing two articles, one referenced twice, one opened
    # twice from that search (by agent-a), and a curator's unattributed open
    viewer = Viewer.for_subject("agent-a")
    result = knowledge_search(tenant=tenant, viewer=viewer, query="deploy")
    knowledge_search_record(tenant=tenant, viewer=viewer, api_key_id=None, result=result)
    for _ in range(2):
        record_referenced(
            tenant=tenant,
            viewer=CURATOR,
            api_key_id=None,
            search_id=result.search_id,
            article_ids=[wiki[0].pk],
        )
        agent.client.get(f"{BASE}/articles/{wiki[1].pk}", {"search_id": str(result.search_id)})
    user.client.get(f"{BASE}/articles/{wiki[0].pk}")

    # when
    response = user.client.get(f"{BASE}/metrics", {"window": "24h"})

    # then
    assert response.status_code == 200
    assert response.json() == {
        "data": {
            "window": "24h",
            "surfaced": 2,
            "opened": 1,
            "referenced": 1,
            "open_rate": 0.5,
            "reference_rate": 0.5,
        },
        "meta": {},
    }


def test_metrics_refuse_an_unknown_window(user):
    response = user.client.get(f"{BASE}/metrics", {"window": "1y"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
