"""pgvector's iterative index scan: probed once per connection, reported as one derivation by
memory recall and knowledge search, and never set on a server that lacks it."""

from __future__ import annotations

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from apps.core.db.iterative_scan import NOT_IN_PGVECTOR, IterativeScan, iterative_scan, support_from
from apps.knowledge.selectors import knowledge_search
from apps.knowledge.viewer import Viewer
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from tests.knowledge.helpers import publish
from tests.memory.factories import memory_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def unprobed(monkeypatch):
    """Forget what earlier tests probed on this connection."""
    for alias in ("default", "heavy_read"):
        monkeypatch.delattr(connections[alias], "_engram_iterative_scan", raising=False)


@pytest.fixture
def old_pgvector(unprobed, mocker):
    """The server answers as a pgvector before 0.8 does: no hnsw.iterative_scan setting."""
    return mocker.patch("apps.core.db.iterative_scan._probe", return_value=None)


def test_this_server_has_the_iterative_scan_and_is_probed_once_per_connection(
    unprobed, django_assert_num_queries
):
    with django_assert_num_queries(2):
        first = iterative_scan("default")
    with django_assert_num_queries(0):
        again = iterative_scan("default")

    assert first == again == IterativeScan(available=True)


def test_a_missing_setting_is_unavailable_with_its_reason():
    support = support_from(None)

    assert support.meta() == {
        "ann_iterative_scan": "unavailable",
        "ann_iterative_scan_reason": NOT_IN_PGVECTOR,
    }
    assert support_from("off").meta() == {"ann_iterative_scan": "applied"}


def _no_iterative_scan_set(queries) -> bool:
    return not any(
        "iterative_scan" in query["sql"] or "max_scan_tuples" in query["sql"] for query in queries
    )


def test_memory_recall_reports_unavailable_and_still_returns_the_exact_answer(
    tenant, agent, settings, old_pgvector
):
    # given: a subject past the exact-scan bound
    for i in range(40):
        memory_row(tenant, "agent-a", f"note {i} about topic {i % 7} and item {i}")
    exact = memory_recall(
        tenant=tenant, subject_id="agent-a", query="topic 3 item", limit=5, mode="semantic"
    )
    settings.MEMORY_EXACT_SCAN_MAX_ROWS = 10

    # when
    with CaptureQueriesContext(connection) as queries:
        response = agent.post(
            "/api/v1/memory/recall", {"query": "topic 3 item", "limit": 5, "mode": "semantic"}
        )

    # then
    meta = response.json()["meta"]
    assert response.status_code == 200
    assert (meta["ann_iterative_scan"], meta["ann_iterative_scan_reason"]) == (
        "unavailable",
        NOT_IN_PGVECTOR,
    )
    assert meta["strategy"] in {"ann", "ann+exact"}
    # Ties may be broken differently by the index; the scores may not differ.
    assert [round(hit["score"], 6) for hit in response.json()["data"]] == [
        round(hit.score or 0, 6) for hit in exact.results
    ]
    assert _no_iterative_scan_set(queries.captured_queries)
    assert Memory.objects.filter(tenant=tenant).count() == 40


def test_hybrid_recall_carries_the_reason_too(tenant, settings, old_pgvector):
    for i in range(20):
        memory_row(tenant, "agent-a", f"note {i} about topic {i % 7}")
    settings.MEMORY_EXACT_SCAN_MAX_ROWS = 5

    result = memory_recall(tenant=tenant, subject_id="agent-a", query="topic 3", limit=3)

    assert (result.meta["ann_iterative_scan"], result.meta["ann_iterative_scan_reason"]) == (
        "unavailable",
        NOT_IN_PGVECTOR,
    )


def test_knowledge_search_reports_unavailable_over_http(tenant, agent, settings, old_pgvector):
    # given
    for title in ("Deploy freeze", "Deploy checklist", "Redis is a cache"):
        publish(tenant, title, f"{title}: how we deploy.")
    exact = knowledge_search(tenant=tenant, viewer=Viewer.for_subject("agent-a"), query="deploy")
    settings.KNOWLEDGE_EXACT_SCAN_MAX_ROWS = 0

    # when
    with CaptureQueriesContext(connection) as queries:
        response = agent.post("/api/v1/knowledge/search", {"query": "deploy"})

    # then
    meta = response.json()["meta"]
    assert (meta["ann_iterative_scan"], meta["ann_iterative_scan_reason"]) == (
        "unavailable",
        NOT_IN_PGVECTOR,
    )
    assert [row["title"] for row in response.json()["data"]] == [
        hit.article.title for hit in exact.results
    ]
    assert _no_iterative_scan_set(queries.captured_queries)


def test_with_the_scan_available_there_is_no_reason(tenant, settings, unprobed):
    for title in ("Deploy freeze", "Deploy checklist"):
        publish(tenant, title, f"{title}: how we deploy.")
    settings.KNOWLEDGE_EXACT_SCAN_MAX_ROWS = 0

    result = knowledge_search(tenant=tenant, viewer=Viewer.for_subject("agent-a"), query="deploy")

    assert result.meta["ann_iterative_scan"] == "applied"
    assert "ann_iterative_scan_reason" not in result.meta
