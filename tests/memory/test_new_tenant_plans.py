"""A tenant newer than the tables' statistics still has its agent's rows read by agent.

Until the next ANALYZE the planner expects hardly any rows for a new tenant. With an index on
``tenant_id`` alone it read every row of the tenant (all its agents) to find one agent's: to
count its live memories before each write, to read back a session, to clear a forgotten
text's tombstone on each write (migrations 0021 and 0022). The quota now reads the agent's
count row (migration 0024), and these tests keep every such read to the agent's rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memory.selectors import ADMISSION_SQL, session_history
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_create_many,
    session_append_many,
    tombstone_record,
)
from apps.providers.embeddings import embedding_content_hash
from tests.tenancy.factories import TenantFactory

pytestmark = pytest.mark.django_db

AGENTS = ("agent-a", "agent-b", "agent-c")
ROWS_PER_AGENT = 150
TTL_SECONDS = 3_600


def _scans(plan: dict[str, Any], table: str) -> Iterator[dict[str, Any]]:
    if plan.get("Relation Name") == table:
        yield plan
    for child in plan.get("Plans", ()):
        yield from _scans(child, table)


def _rows_read(sql: str, table: str, params: Any = None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        (document,) = cursor.fetchone()
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    return sum(
        scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0) for scan in _scans(plan, table)
    )


def _new_tenant_after_analyze(write: Any) -> Any:
    """A settled tenant's rows, ANALYZE, then a new tenant whose agents' rows it never saw."""
    write(TenantFactory.create(), "settled-agent", 200)
    with connection.cursor() as cursor:
        for table in ("memory_memory", "memory_sessionmemory", "memory_memorytombstone"):
            cursor.execute(f"ANALYZE {table}")
    tenant = TenantFactory.create()
    for agent in AGENTS:
        write(tenant, agent, ROWS_PER_AGENT)
    return tenant


def _statements(captured: CaptureQueriesContext, table: str) -> list[str]:
    return [
        query["sql"]
        for query in captured.captured_queries
        # A server-bound statement is logged without its text (sql is None).
        if (query["sql"] or "").startswith(("SELECT", "DELETE"))
        and f'FROM "{table}"' in query["sql"]
    ]


def _memories(tenant: Any, agent: str, count: int) -> None:
    memory_create_many(
        tenant=tenant,
        subject_id=agent,
        drafts=[MemoryDraft(text=f"{agent} note {n}") for n in range(count)],
    )


def _turns(tenant: Any, agent: str, count: int) -> None:
    session_append_many(
        tenant=tenant,
        subject_id=agent,
        drafts=[
            SessionTurnDraft(session_id="s1", content=f"{agent} turn {n}", ttl_seconds=TTL_SECONDS)
            for n in range(count)
        ],
    )


def _tombstones(tenant: Any, agent: str, count: int) -> None:
    tombstone_record(
        tenant=tenant,
        subject_id=agent,
        content_hashes=[embedding_content_hash(f"{agent} forgot {n}") for n in range(count)],
    )


def _admission_rows_read(tenant: Any, table: str, *texts: str) -> int:
    """Rows of ``table`` the write's admission statement (the quota, the tombstones) reads."""
    params = {
        "tenant": tenant.pk,
        "subject": "agent-a",
        "hashes": [embedding_content_hash(text) for text in texts],
    }
    return _rows_read(ADMISSION_SQL, table, params)


def test_a_new_tenants_quota_check_reads_one_count_row():
    tenant = _new_tenant_after_analyze(_memories)

    with CaptureQueriesContext(connection) as captured:
        _memories(tenant, "agent-a", 1)
    counts = [sql for sql in _statements(captured, "memory_memory") if "COUNT(*)" in sql]

    assert counts == []
    assert _admission_rows_read(tenant, "memory_memory", "agent-a note 1") == 0
    # One row per subject: the planner may scan this small table, never the agent's memories.
    subjects = 1 + len(AGENTS)
    assert 1 <= _admission_rows_read(tenant, "memory_scope_usage", "agent-a note 1") <= subjects


def test_a_new_tenants_session_reads_only_the_agents_turns():
    tenant = _new_tenant_after_analyze(_turns)

    with CaptureQueriesContext(connection) as captured:
        page = session_history(tenant=tenant, subject_id="agent-a", session_id="s1")
        assert len(page.results) == ROWS_PER_AGENT
    statements = _statements(captured, "memory_sessionmemory")

    assert statements
    for sql in statements:
        assert _rows_read(sql, "memory_sessionmemory") <= ROWS_PER_AGENT


def test_a_new_tenants_write_reads_and_clears_only_the_agents_tombstones():
    tenant = _new_tenant_after_analyze(_tombstones)
    forgotten = "agent-a forgot 0"

    assert _admission_rows_read(tenant, "memory_memorytombstone", forgotten) <= 1
    with CaptureQueriesContext(connection) as captured:
        memory_create_many(tenant=tenant, subject_id="agent-a", drafts=[MemoryDraft(forgotten)])
    (clear,) = _statements(captured, "memory_memorytombstone")

    assert clear.startswith("DELETE")
    assert _rows_read(clear, "memory_memorytombstone") <= 1
