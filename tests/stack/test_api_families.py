"""Every endpoint family answers over HTTP on the production topology (production settings,
two web processes, the replica behind heavy reads, Redis, the Celery workers)."""

from __future__ import annotations

import httpx
import pytest

from tests.stack.conftest import eventually

pytestmark = pytest.mark.stack


def test_health_metrics_and_schema(running_stack):
    with httpx.Client(base_url=running_stack.url, timeout=30) as anonymous:
        ready = anonymous.get("/readyz").json()["data"]
        assert ready["status"] == "ready"
        assert ready["replica"]["configured"] is True
        assert ready["replica"]["available"] is True
        assert anonymous.get("/healthz").status_code == 200
        assert "engram_replica_lag_bytes" in anonymous.get("/metrics").text
        assert anonymous.get("/api/schema/").status_code == 200


def test_whoami_and_long_term_memory_round_trip(api):
    assert api.get("/api/v1/tenancy/whoami").json()["data"]["role"] == "agent"
    written = api.post("/api/v1/memory", json={"text": "The staging cluster lives in Oslo"})
    assert written.status_code == 201, written.text
    memory_id = written.json()["data"]["id"]
    batch = api.post(
        "/api/v1/memory/batch",
        json={"items": [{"text": "Backups run at 02:00"}, {"text": "Alerts go to #ops"}]},
    )
    assert batch.status_code == 201, batch.text

    assert api.get(f"/api/v1/memory/{memory_id}").json()["data"]["text"].endswith("Oslo")
    assert api.get("/api/v1/memory").json()["meta"]["total_count"] == 3
    # Embedded by the worker through the (fake) provider, then found by meaning's leg too.
    found = eventually(
        lambda: [
            hit
            for hit in api.post(
                "/api/v1/memory/recall", json={"query": "staging cluster Oslo"}
            ).json()["data"]
            if hit["memory"]["id"] == memory_id and hit["embedding_status"] == "ready"
        ]
    )
    assert found
    assert api.delete(f"/api/v1/memory/{memory_id}").status_code in {200, 204}
    assert api.get(f"/api/v1/memory/{memory_id}").status_code == 404


def test_session_tier_appends_and_reads_back_in_order(api):
    for content in ("first turn", "second turn"):
        appended = api.post(
            "/api/v1/memory",
            json={"tier": "session", "session_id": "s1", "content": content, "ttl_seconds": 600},
        )
        assert appended.status_code == 201, appended.text

    history = api.get("/api/v1/memory/sessions/s1").json()["data"]

    assert [turn["content"] for turn in history] == ["first turn", "second turn"]


def test_promotion_runs_through_the_worker(api):
    turns = [
        "I prefer green tea over coffee in the mornings.",
        "My sister Ana lives in Lisbon and works as a nurse.",
        "I am allergic to peanuts, so please keep that in mind.",
        "We are moving the team offsite to Porto in March.",
    ]
    for content in turns:
        api.post(
            "/api/v1/memory",
            json={"tier": "session", "session_id": "talk", "content": content, "ttl_seconds": 600},
        )

    promoted = api.post("/api/v1/memory/promote", json={"session_id": "talk"})

    assert promoted.status_code in {200, 202}, promoted.text
    assert promoted.json()["data"]["enqueued"] is True
    memories = eventually(
        lambda: [
            memory
            for memory in api.get("/api/v1/memory").json()["data"]
            if memory["source_session_id"] == "talk"
        ],
        timeout=60,
    )
    assert {memory["source"] for memory in memories} != {"explicit"}


def test_knowledge_articles_search_context_and_metrics(api):
    created = api.post(
        "/api/v1/knowledge/articles",
        json={
            "title": "Friday deploy freeze",
            "body": "We never deploy to production on Fridays; incident hotfixes excepted.",
            "category": "decision",
        },
    )
    assert created.status_code == 201, created.text
    article_id = created.json()["data"]["article"]["id"]

    # Search is a heavy read, served by the replica once it has replayed the article.
    eventually(
        lambda: (
            article_id
            in [
                hit["id"]
                for hit in api.post(
                    "/api/v1/knowledge/search", json={"query": "deploy on fridays"}
                ).json()["data"]
            ]
        )
    )
    context = api.get("/api/v1/knowledge/context", params={"query": "deploy on fridays"})

    assert context.status_code == 200, context.text
    assert api.get(f"/api/v1/knowledge/articles/{article_id}").status_code == 200
    assert api.get("/api/v1/knowledge/metrics").status_code in {200, 403}


def test_projects_resolve_answers(api):
    response = api.get("/api/v1/projects/resolve", params={"slug": "no-such-project"})

    assert response.status_code == 404
    assert response.json()["error"]["code"]


def test_superadmin_reads_a_tenant_by_impersonation(running_stack, issue_key, tenant_slug):
    superadmin = running_stack.manage_json("create_api_key", "--role", "superadmin")["key"]
    with httpx.Client(
        base_url=running_stack.url, headers={"Authorization": f"Bearer {superadmin}"}, timeout=30
    ) as client:
        refused = client.get("/api/v1/memory")
        allowed = client.get("/api/v1/memory", headers={"X-Impersonate-Tenant": tenant_slug})

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "impersonation_tenant_required"
    assert allowed.status_code == 200, allowed.text
