"""flood_bench and the flood cases: loopback and bounds, how outcomes are labelled, and the
before/after comparison that tells another subject's or tenant's changed rows from the
flooder's own."""

from __future__ import annotations

import json

import pytest

from apps.memory.models import Memory
from lab import flood_bench
from lab.faults import floods
from lab.load_bench import LoadBenchRefused
from tests.memory.factories import MemoryFactory

PLAN = flood_bench.FloodPlan(
    url="http://127.0.0.1:8000", seconds=60, quiet_seconds=30, connections=8, quiet_rate=5
)


@pytest.mark.parametrize(
    ("_case", "changes"),
    [
        ("not loopback", {"url": "http://example.com"}),
        ("no flood", {"seconds": 0}),
        ("too long", {"seconds": flood_bench.MAX_SECONDS + 1}),
        ("no baseline", {"quiet_seconds": 0}),
        ("no connection", {"connections": 0}),
        ("too many connections", {"connections": flood_bench.MAX_CONNECTIONS + 1}),
        ("no recalls", {"quiet_rate": 0}),
        ("too many recalls", {"quiet_rate": flood_bench.MAX_QUIET_RATE + 1}),
    ],
)
def test_a_plan_out_of_bounds_is_refused(_case, changes):
    with pytest.raises(LoadBenchRefused):
        flood_bench.validate(flood_bench.FloodPlan(**{**PLAN.__dict__, **changes}))


def test_the_default_plan_is_accepted():
    assert flood_bench.validate(PLAN) == PLAN


def _refusal(code: str, retry_after: int) -> bytes:
    return json.dumps(
        {"error": {"code": code, "details": {"retry_after_seconds": retry_after}}}
    ).encode()


@pytest.mark.parametrize(
    ("status", "payload", "label"),
    [
        ("201", b"{}", "201"),
        ("429", _refusal("too_many_requests_in_flight", 1), "429 too_many_requests_in_flight"),
        ("409", _refusal("session_quota_exceeded", 1), "409 session_quota_exceeded"),
        ("502", b"<html>bad gateway</html>", "502 no_envelope"),
        ("ConnectionResetError", b"", "ConnectionResetError"),
    ],
)
def test_outcomes_are_labelled_by_status_and_code(status, payload, label):
    assert flood_bench.outcome_label(status, payload) == label


def test_a_refusals_retry_after_is_read_from_its_details():
    assert flood_bench.retry_after_seconds(_refusal("rate_limited", 15)) == 15.0
    assert flood_bench.retry_after_seconds(b"not json") == 0.0


@pytest.mark.django_db
def test_the_snapshot_sees_another_subjects_and_another_tenants_rows_but_not_the_flooders(
    tenant, other_tenant
):
    keys = floods.Keys(
        tenant_id=str(tenant.pk),
        other_tenant_id=str(other_tenant.pk),
        flooder="",
        bystander="",
        other_tenant_flooder="",
    )
    bystander = MemoryFactory.create(tenant=tenant, subject_id=floods.BYSTANDER, text="tea")
    foreign = MemoryFactory.create(tenant=other_tenant, subject_id=floods.FLOODER, text="tea")
    before = floods.snapshot(keys)

    MemoryFactory.create(tenant=tenant, subject_id=floods.FLOODER, text="the flood")
    assert floods.changed_tables(before, floods.snapshot(keys)) == {
        "other_subjects": [],
        "other_tenants": [],
    }

    Memory.objects.filter(pk=bystander.pk).update(text="coffee")
    Memory.objects.filter(pk=foreign.pk).update(recall_count=1)
    assert floods.changed_tables(before, floods.snapshot(keys)) == {
        # A new text has new search terms too.
        "other_subjects": ["memory_memory", "memory_search_term"],
        "other_tenants": ["memory_memory"],
    }


def test_repeated_runs_report_the_median_ratios(monkeypatch):
    ratios = iter([(3.0, 1.2), (1.5, 1.1), (1.9, None)])

    def one_run(**_kwargs):
        p99, p50 = next(ratios)
        return {"p99_ratio": p99, "p50_ratio": p50}

    monkeypatch.setattr(flood_bench, "flood_bench", one_run)
    report = flood_bench.flood_bench_repeated(plan=PLAN, memories_per_agent=1, repeat=3)
    assert len(report["runs"]) == 3
    assert report["p99_ratio_median"] == 1.9
    assert report["p50_ratio_median"] == pytest.approx(1.15)
    assert report["within_target"] is True
