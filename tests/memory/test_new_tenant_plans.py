"""A tenant newer than the table's statistics still has its agent's rows read by agent.

Until the next ANALYZE the planner expects hardly any rows for a new tenant. With an index on
``tenant_id`` alone it read every row of the tenant (all its agents) to count one agent's live
memories before each write (migration 0021).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memory.services import MemoryDraft, memory_create_many
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

AGENTS = ("agent-a", "agent-b", "agent-c")
ROWS_PER_AGENT = 150


def _scans(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if plan.get("Relation Name") == "memory_memory":
        yield plan
    for child in plan.get("Plans", ()):
        yield from _scans(child)


def _rows_read_from_memories(sql: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        (document,) = cursor.fetchone()
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    return sum(scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0) for scan in _scans(plan))


def test_a_new_tenants_quota_count_reads_only_the_agents_rows():
    settled = TenantFactory.create()
    memory_create_many(
        tenant=settled,
        subject_id="settled-agent",
        drafts=[MemoryDraft(text=f"settled note {n}") for n in range(200)],
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
    tenant = TenantFactory.create()
    for agent in AGENTS:
        memory_create_many(
            tenant=tenant,
            subject_id=agent,
            drafts=[MemoryDraft(text=f"{agent} note {n}") for n in range(ROWS_PER_AGENT)],
        )

    with CaptureQueriesContext(connection) as captured:
        memory_create_many(
            tenant=tenant, subject_id="agent-a", drafts=[MemoryDraft(text="one more")]
        )
    (count_sql,) = [
        query["sql"]
        for query in captured.captured_queries
        if query["sql"].startswith("SELECT COUNT(*)") and "memory_memory" in query["sql"]
    ]

    assert _rows_read_from_memories(count_sql) <= ROWS_PER_AGENT + 1
