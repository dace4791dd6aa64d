"""load_bench: loopback only, bounded, seeds and removes its own tenant, counts every request."""

from __future__ import annotations

import pytest

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
    tenant, agents = load_bench.seed(agents=2, memories_per_agent=5, settle_seconds=0)
    assert Memory.objects.filter(tenant=tenant, embedding__isnull=False).count() == 10

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

    assert load_bench.remove(tenant=tenant) == 15
    assert Tenant.objects.filter(pk=tenant.pk).count() == 0
    assert Memory.objects.filter(tenant_id=tenant.pk).count() == 0
