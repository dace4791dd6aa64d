"""Recall's prepared statements on the heavy-read connection run on generic plans.

A custom plan is made for the parameters' values, and for a tenant or agent newer than the
table's last ANALYZE the statistics say "hardly any rows": the planner then reads the
subject through the bare tenant index and joins by re-scanning it, 15-25× the work of the
generic plan (docs/benchmarks/load.md, "A new tenant's plans"). Left to choose, Postgres keeps
such custom plans, because their estimated cost is the lower one.
"""

from __future__ import annotations

import pytest

from apps.core.db.routers import HEAVY_READ
from apps.memory.selectors import memory_recall
from tests.core.db.conftest import preparing_on_second_run
from tests.memory.factories import memory_row
from tests.tenancy.factories import TenantFactory

RUNS = 4


@pytest.fixture
def prepared_on_second_run():
    with preparing_on_second_run(HEAVY_READ) as heavy_read:
        yield heavy_read


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_recall_statements_run_on_generic_plans_once_prepared(prepared_on_second_run):
    tenant = TenantFactory.create()
    for number in range(6):
        memory_row(tenant, "agent-a", f"the deploy pipeline note {number} runs on fridays")

    for run in range(RUNS):
        result = memory_recall(
            tenant=tenant, subject_id="agent-a", query=f"deploy pipeline {run}", mode="hybrid"
        )
        assert len(result.results) == 6

    with prepared_on_second_run.cursor() as cursor:
        cursor.execute(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            ["%memory_memory%"],
        )
        prepared = cursor.fetchall()

    assert prepared, "recall prepared none of its statements"
    for statement, generic_plans, custom_plans in prepared:
        assert custom_plans == 0, statement
        assert generic_plans >= 1, statement
