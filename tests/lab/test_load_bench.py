"""load_bench: loopback only, bounded, seeds and removes its own tenant, counts every request."""

from __future__ import annotations

import os

import pytest
from django.db import connection

from apps.memory.models import Memory
from apps.tenancy.models import Tenant
from lab import load_bench


@pytest.mark.parametrize(
    ("_case", "url"),
    [
        ("public host", "http://example.com:8000"),
        ("private address", "http://10.0.0.5:8000"),
        ("not http", "ftp://127.0.0.1/"),
    ],
)
def test_only_loopback_servers_are_loaded(_case, url):
    with pytest.raises(load_bench.LoadBenchRefused):
        load_bench.require_loopback(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "http://localhost:9", "http://[::1]:80"])
def test_loopback_urls_are_accepted(url):
    assert load_bench.require_loopback(url) == url.rstrip("/")


@pytest.mark.parametrize(
    ("_case", "changes"),
    [
        ("too many clients", {"clients": load_bench.MAX_CLIENTS + 1}),
        ("no time", {"seconds": 0}),
        ("too long", {"seconds": load_bench.MAX_SECONDS + 1}),
        ("unbounded requests", {"max_requests": load_bench.MAX_REQUESTS + 1}),
        ("unknown mix", {"mix": "delete"}),
    ],
)
def test_bounds_are_enforced(_case, changes):
    plan = {"url": "http://127.0.0.1:8000", "clients": 8, "seconds": 15, "mix": "mixed"}
    with pytest.raises(load_bench.LoadBenchRefused):
        load_bench.validate(load_bench.LoadPlan(**{**plan, "max_requests": 100, **changes}))


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_a_mixed_run_counts_every_request_and_removes_its_tenant(live_server):
    analyses_before = {table: _stat(table, "analyze_count") for table in load_bench.SEEDED_TABLES}
    tenant, agents = load_bench.seed(agents=2, memories_per_agent=5, settle_seconds=0)
    assert Memory.objects.filter(tenant=tenant, embedding__isnull=False).count() == 10
    # The seeded tables' statistics are fresh before the clock starts.
    for table, before in analyses_before.items():
        assert _stat(table, "analyze_count") == before + 1, table

    plan = load_bench.LoadPlan(
        url=live_server.url, clients=2, seconds=60, mix="mixed", max_requests=20
    )
    report = load_bench.run(plan=load_bench.validate(plan), agents=agents)
    operations = report["operations"]
    assert operations["recall"]["requests"] + operations["write"]["requests"] == 20
    assert operations["write"]["requests"] == 5  # one in MIXED_WRITE_EVERY tickets
    assert operations["recall"]["errors"] == 0
    assert operations["write"]["errors"] == 0
    assert operations["write"]["statuses"] == {"201": 5}

    machine = report["machine"]
    assert 0 < machine["busy_share"] <= 1
    assert 0 <= machine["steal_share"] < 1
    assert machine["cpu_ms_per_request"] > 0

    vacuums_before = _stat("memory_memory", "vacuum_count")
    assert load_bench.remove(tenant=tenant) == 15
    assert _stat("memory_memory", "vacuum_count") == vacuums_before + 1
    assert Tenant.objects.filter(pk=tenant.pk).count() == 0
    assert Memory.objects.filter(tenant_id=tenant.pk).count() == 0


def _stat(table: str, counter: str) -> int:
    """One of ``table``'s cumulative counters in ``pg_stat_user_tables`` (a trusted name)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {counter} FROM pg_stat_user_tables WHERE relname = %s",  # noqa: S608
            [table],
        )
        (count,) = cursor.fetchone()
    return int(count)


def test_machine_cpu_is_busy_time_over_the_run_per_request(monkeypatch):
    monkeypatch.setattr(os, "sysconf", lambda name: 100)  # clock ticks per second
    before = load_bench.MachineTimes(busy=1_000, steal=10, total=5_000)
    after = load_bench.MachineTimes(busy=1_300, steal=30, total=5_400)

    figures = load_bench.machine_cpu(before, after, requests=150)

    # 300 busy ticks of 400 on the clock; 3 CPU-seconds over 150 requests.
    assert figures == {"busy_share": 0.75, "steal_share": 0.05, "cpu_ms_per_request": 20.0}
    assert load_bench.machine_cpu(before, None, requests=150) is None
    assert load_bench.machine_cpu(before, after, requests=0)["cpu_ms_per_request"] is None
