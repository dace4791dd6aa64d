"""What a tag or metadata filter costs recall and list, and which plan serves it.

One throwaway tenant, two subjects of ``rows`` memories each (every ``wanted_every``-th one
tagged ``lg:wanted`` and ``kind: wanted``, every one with a number and an ISO date in its
metadata), random vectors. For each filter (none, a tag, metadata equality, a number range,
a date range) it reports the plan of the recall scope's row count (``EXPLAIN ANALYZE``: the
index the planner picked, shared buffers touched, execution time) and the median wall time
of ``memory_recall`` in each mode and of ``memory_list``, against the unfiltered reference
measured in the same run.
"""

from __future__ import annotations

import functools
import json
import secrets
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import connections, transaction

from apps.core.db.filters import RecordFilter, record_filter_parse
from apps.core.db.routers import PRIMARY
from apps.memory.models import Memory
from apps.memory.selectors import memory_list, memory_recall, recall_scope
from apps.memory.services import MemoryDraft, memory_write_batch
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create

MODES = ("semantic", "keyword", "hybrid")
QUERY = "pizza and deploys"
BATCH = 500
FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "tag": {"tags": "lg:wanted"},
    "metadata_equal": {"metadata": {"kind": "wanted"}},
    "number_range": {"metadata": {"value": {"n": {"$lt": 10}}}},
    "date_range": {"metadata": {"value": {"due": {"$lt": "2024-02-15"}}}},
}


@dataclass
class FilterFigures:
    name: str
    matching_rows: int
    plan_index: str
    plan_buffers: int
    plan_ms: float
    recall_ms: dict[str, float] = field(default_factory=dict)
    list_ms: float = 0.0


@dataclass
class RecallFilterBench:
    rows_per_subject: int
    wanted_every: int
    runs: int
    filters: list[FilterFigures]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _load(tenant: Tenant, subject_id: str, rows: int, wanted_every: int) -> None:
    for start in range(0, rows, BATCH):
        drafts = []
        for n in range(start, min(rows, start + BATCH)):
            wanted = n % wanted_every == 0
            drafts.append(
                MemoryDraft(
                    text=f"note {n} about pizza and deploys",
                    tags=["langgraph", f"lg:ns{n % 50}", *(["lg:wanted"] if wanted else [])],
                    metadata={
                        "kind": "wanted" if wanted else "crowd",
                        "value": {"n": n, "due": f"2024-{1 + n % 12:02d}-01"},
                    },
                )
            )
        memory_write_batch(tenant=tenant, subject_id=subject_id, memories=drafts, turns=[])


def _random_vectors(tenant: Tenant) -> None:
    table = Memory._meta.db_table
    with transaction.atomic(using=PRIMARY), connections[PRIMARY].cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 0")
        cursor.execute(
            f"UPDATE {table} SET embedding = (SELECT array_agg(random()::real) "  # noqa: S608
            f"FROM generate_series(1, 384) WHERE id IS NOT NULL)::vector(384), "
            f"embedded_at = now() WHERE tenant_id = %s",
            [tenant.pk],
        )
        cursor.execute(f"ANALYZE {table}")


def _plan(tenant: Tenant, raw: dict[str, Any] | None) -> tuple[str, int, float]:
    scope = recall_scope(
        tenant_id=tenant.pk,
        subject_id="a",
        project_id=None,
        include_superseded=False,
        narrowing=record_filter_parse(raw),
    )
    sql = f"SELECT count(*) FROM {scope.table} WHERE {scope.where}"  # noqa: S608
    with connections[scope.using].cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", list(scope.params))
        (document,) = cursor.fetchone() or ([{}],)
    plan = (json.loads(document) if isinstance(document, str) else document)[0]
    indexes: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if "Index Name" in node:
            indexes.append(str(node["Index Name"]))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    buffers = int(plan["Plan"].get("Shared Hit Blocks", 0)) + int(
        plan["Plan"].get("Shared Read Blocks", 0)
    )
    return ", ".join(indexes) or "seq scan", buffers, float(plan["Execution Time"])


def _median_ms(runs: int, call: Any) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 2)


def _recall(tenant: Tenant, mode: str, narrowing: RecordFilter | None) -> None:
    memory_recall(
        tenant=tenant, subject_id="a", query=QUERY, limit=10, mode=mode, narrowing=narrowing
    )


def _list(tenant: Tenant, narrowing: RecordFilter | None) -> None:
    list(memory_list(tenant=tenant, subject_id="a", narrowing=narrowing, limit=50).results)


def recall_filter_bench_run(*, rows: int, wanted_every: int, runs: int) -> RecallFilterBench:
    """Load the corpus into a new tenant and measure every filter (see the module)."""
    tenant = tenant_create(slug=f"bench-filters-{secrets.token_hex(4)}", name="filter bench")
    tenant.embedding_provider = "fake"
    tenant.save(update_fields=["embedding_provider"])
    for subject_id in ("a", "b"):
        _load(tenant, subject_id, rows, wanted_every)
    _random_vectors(tenant)
    figures = []
    for name, raw in FILTERS.items():
        narrowing = record_filter_parse(raw)
        index, buffers, plan_ms = _plan(tenant, raw)
        page = memory_list(tenant=tenant, subject_id="a", narrowing=narrowing, limit=50)
        entry = FilterFigures(
            name=name,
            matching_rows=page.total_count,
            plan_index=index,
            plan_buffers=buffers,
            plan_ms=round(plan_ms, 3),
        )
        for mode in MODES:
            entry.recall_ms[mode] = _median_ms(
                runs, functools.partial(_recall, tenant, mode, narrowing)
            )
        entry.list_ms = _median_ms(runs, functools.partial(_list, tenant, narrowing))
        figures.append(entry)
    return RecallFilterBench(
        rows_per_subject=rows, wanted_every=wanted_every, runs=runs, filters=figures
    )
