"""Query-count pins for the memory read endpoints: the count does not grow with the rows.

Each test runs with 3 and with 30 of the caller's memories (half embedded, half pending,
some filed under a project, plus other subjects' and tenants' rows) and pins the same exact
number of queries for both. An N+1 (a deferred column read per row, a relation loaded per
hit) would change the count with the rows and fail one of the two cases.

Counts are for a key already seen: its first request authenticates it from the database
and stamps ``last_used_at`` (then cached, ``API_KEY_CACHE_SECONDS``), so each test makes one
warm-up request first. The recall bump runs on a background thread after the response, on
its own connection, and is not counted.
"""

from __future__ import annotations

import pytest

from apps.projects.models import Project
from tests.memory.factories import MemoryFactory
from tests.projects.factories import ProjectFactory

MEMORIES = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"

ROW_COUNTS = [pytest.param(3, id="3-rows"), pytest.param(30, id="30-rows")]

#: The page of rows and its total count.
LIST_QUERIES = 2
#: Hybrid recall: the vector leg (exact scan with its size check in one statement), the BM25
#: leg (rows and their similarity in one statement), and the count of pending rows searched.
RECALL_QUERIES = 3


def _seed(tenant, rows: int) -> Project:
    """``rows`` memories of the caller (``agent-a``) mentioning "deploy", a third of them
    under the returned project, and another subject's row."""
    project = ProjectFactory.create(tenant=tenant)
    for index in range(rows):
        MemoryFactory.create(
            tenant=tenant,
            text=f"deploy note {index}: the canary stage runs for {index} minutes",
            embedded=index % 2 == 0,
            tags=["ops", f"n{index}"],
            metadata={"index": index},
            project=project if index % 3 == 0 else None,
        )
    MemoryFactory.create(tenant=tenant, subject_id="agent-b", text="deploy note of agent b")
    return project


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_memory_list_costs_the_same_queries_for_any_page_size(
    agent, tenant, other_tenant, django_assert_num_queries, rows
):
    agent.get(MEMORIES)  # warm-up: authenticates the key
    _seed(tenant, rows)
    MemoryFactory.create(tenant=other_tenant, text="another tenant's deploy note")

    _keep_the_key_warm(agent)
    with django_assert_num_queries(LIST_QUERIES):
        response = agent.get(f"{MEMORIES}?limit=50")

    assert response.status_code == 200, response.content
    assert len(response.json()["data"]) == rows


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_memory_recall_costs_the_same_queries_for_any_number_of_hits(
    agent, tenant, django_assert_num_queries, rows
):
    agent.post(RECALL, {"query": "warm up"})  # warm-up: authenticates the key
    _seed(tenant, rows)
    # Recall without project_id reads the global partition: the rows not under the project.
    expected_hits = sum(1 for index in range(rows) if index % 3 != 0)

    _keep_the_key_warm(agent)
    with django_assert_num_queries(RECALL_QUERIES):
        response = agent.post(RECALL, {"query": "deploy canary", "limit": 100})

    assert response.status_code == 200, response.content
    hits = response.json()["data"]
    assert len(hits) == expected_hits
    assert {hit["embedding_status"] for hit in hits} == {"ready", "pending"}


@pytest.mark.parametrize("rows", ROW_COUNTS)
def test_project_recall_costs_the_same_queries_for_any_number_of_hits(
    agent, tenant, django_assert_num_queries, rows
):
    agent.post(RECALL, {"query": "warm up"})  # warm-up: authenticates the key
    project = _seed(tenant, rows)

    _keep_the_key_warm(agent)
    with django_assert_num_queries(RECALL_QUERIES):
        response = agent.post(
            RECALL, {"query": "deploy canary", "limit": 100, "project_id": str(project.pk)}
        )

    assert response.status_code == 200, response.content
    assert len(response.json()["data"]) == rows  # global ∪ the project


def _keep_the_key_warm(agent) -> None:
    """Seeding can outlast the authenticated-key cache (ENGRAM_API_KEY_CACHE_SECONDS) on a
    loaded machine; authenticate again just before the counted request."""
    assert agent.get("/api/v1/tenancy/whoami").status_code == 200
