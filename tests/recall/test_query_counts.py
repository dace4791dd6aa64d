"""Query-count pin for merged recall: the count does not grow with the memories or articles.

Run with 3 and with 30 memories and articles each (half embedded, half pending) and pin
the same exact count for both, so an N+1 in either half, in the merge, or in recording what
was served would change it. As in tests/memory/apis/test_query_counts.py, the key makes one
warm-up request first (its first request authenticates it from the database), and the memory
recall bump, which runs on a background thread after the response, is not counted.
"""

from __future__ import annotations

import pytest

from apps.knowledge.models import AccessType, ArticleAccessEvent
from tests.knowledge.factories import ArticleFactory
from tests.memory.factories import MemoryFactory

RECALL = "/api/v1/recall"

#: Memory half: the vector leg, the BM25 leg, the count of pending rows. Knowledge half: the
#: curated-answer lookup (by title or alias tag, one statement), the keyword leg, the size
#: check that picks an exact or ANN scan, the semantic leg, and one fetch of the winning
#: articles. Recording what was served: one INSERT of every ``surfaced`` event.
MERGED_RECALL_QUERIES = 9


def _seed(tenant, rows: int) -> None:
    for index in range(rows):
        embedded = index % 2 == 0
        MemoryFactory.create(
            tenant=tenant,
            text=f"postgres note {index}: the replica lags by {index} seconds",
            embedded=embedded,
        )
        ArticleFactory.create(
            tenant=tenant,
            title=f"Postgres runbook {index}",
            body=f"How to fail over postgres, step {index}.",
            tags=["ops"],
            embedded=embedded,
        )


@pytest.mark.parametrize("rows", [pytest.param(3, id="3-rows"), pytest.param(30, id="30-rows")])
def test_merged_recall_costs_the_same_queries_for_any_number_of_hits(
    agent, tenant, django_assert_num_queries, rows
):
    agent.post(RECALL, {"query": "warm up"})  # warm-up: authenticates the key
    _seed(tenant, rows)

    _keep_the_key_warm(agent)
    with django_assert_num_queries(MERGED_RECALL_QUERIES):
        response = agent.post(RECALL, {"query": "postgres replica", "limit": 50})

    assert response.status_code == 200, response.content
    body = response.json()
    assert {item["source"] for item in body["data"]} == {"memory", "knowledge"}
    # Every article the knowledge half returned is surfaced (the client sees them all under
    # "knowledge", even those the merged selection left out of "data").
    surfaced = ArticleAccessEvent.objects.filter(tenant=tenant, access_type=AccessType.SURFACED)
    assert surfaced.count() == len(body["knowledge"]["results"])


def _keep_the_key_warm(agent) -> None:
    """Seeding can outlast the authenticated-key cache (ENGRAM_API_KEY_CACHE_SECONDS) on a
    loaded machine; authenticate again just before the counted request."""
    assert agent.get("/api/v1/tenancy/whoami").status_code == 200
