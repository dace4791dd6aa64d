"""Heavy reads on a real streaming replica, under real replication lag (replay paused).

Recall and search read the replica (a memory written while replay is paused is not found); past
the lag bound or with the replica down they read the primary and say so in
``meta.degraded_reason``; reads of the caller's own writes always see them.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections
from django.db.utils import InternalError

from apps.core.db.routers import HEAVY_READ, PRIMARY, PrimaryReplicaRouter
from apps.memory.models import Memory
from tests.knowledge.helpers import publish

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
SEARCH = "/api/v1/knowledge/search"

pytestmark = [
    pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"]),
]


def _recall(agent, query: str) -> Any:
    response = agent.post(RECALL, {"query": query, "mode": "keyword"})
    assert response.status_code == 200, response.content
    return response.json()


def _texts(body: dict) -> list[str]:
    return [hit["memory"]["text"] for hit in body["data"]]


def test_recall_reads_the_replica_so_a_write_it_has_not_replayed_is_not_found(agent, replica):
    replica.pause()
    assert agent.post(MEMORY, {"text": "zebra crossing at dawn"}).status_code == 201

    lagging = _recall(agent, "zebra crossing")

    assert _texts(lagging) == []
    assert lagging["meta"]["degraded_reason"] is None
    replica.resume()
    replica.caught_up()
    assert _texts(_recall(agent, "zebra crossing")) == ["zebra crossing at dawn"]


def test_lag_past_the_bound_sends_recall_to_the_primary_and_says_so(agent, replica, settings):
    settings.HEAVY_READ_MAX_LAG_SECONDS = 0
    replica.pause()
    agent.post(MEMORY, {"text": "zebra crossing at dawn"})
    replica.flush_primary()

    body = _recall(agent, "zebra crossing")

    assert _texts(body) == ["zebra crossing at dawn"]
    assert body["meta"]["degraded_reason"] == "replica_lag"


def test_a_replica_that_is_down_sends_recall_to_the_primary_never_a_500(
    agent, replica, replica_down
):
    agent.post(MEMORY, {"text": "zebra crossing at dawn"})
    connections[HEAVY_READ] = replica_down

    body = _recall(agent, "zebra crossing")

    assert _texts(body) == ["zebra crossing at dawn"]
    assert body["meta"]["degraded_reason"] == "replica_unavailable"


def test_knowledge_search_past_the_bound_reads_the_primary(agent, tenant, replica, settings):
    settings.HEAVY_READ_MAX_LAG_SECONDS = 0
    replica.pause()
    publish(tenant, "Zebra crossings", "Where the zebra crossings are painted.")
    replica.flush_primary()

    response = agent.post(SEARCH, {"query": "zebra crossings"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert [item["title"] for item in body["data"]] == ["Zebra crossings"]
    assert body["meta"]["degraded_reason"] == "replica_lag"


def test_session_history_right_after_an_append_reads_the_primary(agent, replica):
    replica.pause()
    appended = agent.post(
        MEMORY, {"tier": "session", "session_id": "s1", "content": "turn one", "ttl_seconds": 60}
    )
    assert appended.status_code == 201, appended.content

    history = agent.get(f"{MEMORY}/sessions/s1")

    assert history.status_code == 200
    assert [turn["content"] for turn in history.json()["data"]] == ["turn one"]


def test_idempotency_replay_under_lag_reads_the_primary(agent, replica):
    replica.pause()
    first = agent.post(MEMORY, {"text": "once only"}, HTTP_IDEMPOTENCY_KEY="k-1")
    again = agent.post(MEMORY, {"text": "once only"}, HTTP_IDEMPOTENCY_KEY="k-1")

    assert first.status_code == again.status_code == 201
    assert again.json()["data"]["id"] == first.json()["data"]["id"]
    assert Memory.objects.count() == 1


def test_quota_under_lag_counts_on_the_primary(agent, replica, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 1
    replica.pause()
    assert agent.post(MEMORY, {"text": "one"}).status_code == 201

    response = agent.post(MEMORY, {"text": "two"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "quota_exceeded"
    assert Memory.objects.count() == 1


def test_referenced_right_after_merged_recall_sees_its_surfaced_events(
    agent, tenant, replica, settings
):
    # The replica lags (replay paused) and neither holds the article nor the surfaced events
    # this recall writes; `referenced` must still validate against them.
    settings.HEAVY_READ_MAX_LAG_SECONDS = 0
    replica.pause()
    publish(tenant, "Zebra crossings", "Where the zebra crossings are painted.")
    replica.flush_primary()
    recalled = agent.post(MERGED, {"query": "zebra crossings"})
    assert recalled.status_code == 200, recalled.content
    body = recalled.json()
    article_ids = [item["id"] for item in body["knowledge"]["results"]]
    assert len(article_ids) == 1, body
    assert body["meta"]["degraded_reason"] == "replica_lag"

    referenced = agent.post(
        f"{MERGED}/{body['meta']['recall_id']}/referenced", {"article_ids": article_ids}
    )

    assert referenced.status_code == 201, referenced.content
    assert referenced.json()["data"]["recorded"] == 1


def test_readyz_and_metrics_report_the_lag_and_stay_ready(client, agent, replica):
    replica.pause()
    agent.post(MEMORY, {"text": "moves the primary on"})
    replica.flush_primary()

    ready = client.get("/readyz")
    metrics = client.get("/metrics").content.decode()

    assert ready.status_code == 200
    status = ready.json()["data"]["replica"]
    assert status["configured"] is True
    assert status["available"] is True
    assert status["lag_bytes"] > 0
    assert status["lag_seconds"] > 0
    assert ready.json()["data"]["checks"]["heavy_read"] == "ok"
    lag_bytes = next(
        line for line in metrics.splitlines() if line.startswith("engram_replica_lag_bytes ")
    )
    assert float(lag_bytes.split()[1]) > 0


def test_the_replica_refuses_writes_and_migrations_stay_on_the_primary(replica):
    with (
        pytest.raises(InternalError, match="read-only transaction"),
        connections[HEAVY_READ].cursor() as cursor,
    ):
        cursor.execute("CREATE TABLE engram_probe (id int)")
    router = PrimaryReplicaRouter()
    assert router.allow_migrate(HEAVY_READ, "memory") is False
    assert router.allow_migrate(PRIMARY, "memory") is True
