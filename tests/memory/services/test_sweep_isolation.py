"""The graduation and promotion sweeps: one bad candidate is isolated, tenants are served fairly."""

import pkgutil
from datetime import timedelta

from django.utils import timezone

from apps.memory.models import GraduationDeferral, Memory, PromotionJob, PromotionJobStatus
from apps.memory.services import (
    SessionTurnDraft,
    memory_graduation_sweep,
    promotion_sweep,
    session_append_many,
)
from tests.memory.helpers import remember
from tests.tenancy.factories import TenantFactory

IDLE = timedelta(minutes=20)  # past the sweep's idle delay
GRADUATION_PROPOSE = "apps.memory.services.graduation._propose"
SWEEP_PROMOTION_REQUEST = "apps.memory.services.promotion_sweeper.promotion_request"


def _hot(tenant, subject, text, recalls):
    memory = remember(tenant, subject, text)
    Memory.objects.filter(pk=memory.pk).update(recall_count=recalls)
    return memory


def _failing_for(monkeypatch, target, poisoned):
    """Make the function at ``target`` (where the sweep looks it up) raise for poisoned calls."""
    real = pkgutil.resolve_name(target)

    def maybe_explode(*args, **kwargs):
        if poisoned(args, kwargs):
            raise RuntimeError("poisoned candidate")
        return real(*args, **kwargs)

    monkeypatch.setattr(target, maybe_explode)


def test_graduation_sweep_isolates_a_failing_memory_and_defers_it(tenant, monkeypatch, settings):
    poisoned = _hot(tenant, "agent-a", "The hottest memory, which always fails.", recalls=99)
    others = [
        _hot(tenant, "agent-a", f"Ordinary hot fact number {i}.", recalls=5) for i in range(2)
    ]
    _failing_for(monkeypatch, GRADUATION_PROPOSE, lambda a, k: a[0].pk == poisoned.pk)
    now = timezone.now()

    first = memory_graduation_sweep(now=now)
    next_hour = memory_graduation_sweep(now=now + timedelta(hours=1))
    after_retry = memory_graduation_sweep(
        now=now + timedelta(seconds=settings.MEMORY_GRADUATION_RETRY_AFTER_SECONDS + 1)
    )

    assert (first.considered, first.graduated, first.errors) == (3, 2, 1)
    assert all(Memory.objects.get(pk=m.pk).graduated_at is not None for m in others)
    assert (next_hour.considered, next_hour.errors) == (0, 0)  # not the head of the queue again
    assert (after_retry.considered, after_retry.errors) == (1, 1)
    deferral = GraduationDeferral.objects.get(memory_id=poisoned.pk)
    assert (deferral.attempts, deferral.reason) == (2, "RuntimeError")
    assert deferral.retry_at == now + timedelta(
        seconds=settings.MEMORY_GRADUATION_RETRY_AFTER_SECONDS * 3 + 1
    )


def test_a_deferral_is_removed_when_the_memory_graduates(tenant, monkeypatch):
    memory = _hot(tenant, "agent-a", "Flaky at first, fine later.", recalls=5)
    _failing_for(monkeypatch, GRADUATION_PROPOSE, lambda a, k: True)
    now = timezone.now()
    memory_graduation_sweep(now=now)
    monkeypatch.undo()

    later = memory_graduation_sweep(now=now + timedelta(days=8))

    assert later.graduated == 1
    assert Memory.objects.get(pk=memory.pk).graduated_at is not None
    assert not GraduationDeferral.objects.filter(memory_id=memory.pk).exists()


def _session(tenant, subject, session_id, ttl_seconds=3600):
    session_append_many(
        tenant=tenant,
        subject_id=subject,
        drafts=[
            SessionTurnDraft(
                session_id=session_id, content=text, role=role, ttl_seconds=ttl_seconds
            )
            for text, role in (
                (f"{session_id}: I deploy on Fridays", "user"),
                ("Noted.", "assistant"),
            )
        ],
    )


def test_promotion_sweep_isolates_a_failing_session(tenant, monkeypatch):
    for name in ("first", "poisoned", "last"):
        _session(tenant, "agent-a", name)
    _failing_for(monkeypatch, SWEEP_PROMOTION_REQUEST, lambda a, k: k["session_id"] == "poisoned")

    swept = promotion_sweep(now=timezone.now() + IDLE)

    assert (swept.considered, swept.enqueued, swept.errors) == (3, 2, 1)
    assert sorted(PromotionJob.objects.values_list("session_id", flat=True)) == ["first", "last"]


def test_promotion_sweep_is_round_robin_across_tenants(tenant, settings):
    settings.PROMOTION_SWEEP_MAX_SESSIONS = 3
    busy, quiet_a, quiet_b = tenant, TenantFactory.create(), TenantFactory.create()
    for i in range(6):
        # The busy tenant's sessions all expire first: deadline order alone would pick only them.
        _session(busy, "agent-a", f"busy-{i}", ttl_seconds=2000 + i)
    _session(quiet_a, "agent-a", "quiet-a", ttl_seconds=3500)
    _session(quiet_b, "agent-a", "quiet-b", ttl_seconds=3600)

    swept = promotion_sweep(now=timezone.now() + IDLE)

    assert swept.enqueued == 3
    assert sorted(PromotionJob.objects.values_list("session_id", flat=True)) == [
        "busy-0",
        "quiet-a",
        "quiet-b",
    ]
    assert sorted(swept.tenants.values()) == [1, 1, 1]


def test_promotion_sweep_waits_out_a_recently_failed_session(tenant, settings):
    _session(tenant, "agent-a", "failed-before", ttl_seconds=5 * 3600)
    now = timezone.now() + IDLE
    PromotionJob.objects.create(
        tenant=tenant,
        subject_id="agent-a",
        session_id="failed-before",
        trigger="sweep",
        status=PromotionJobStatus.FAILED,
        finished_at=now - timedelta(minutes=10),
    )

    soon = promotion_sweep(now=now)
    later = promotion_sweep(
        now=now + timedelta(seconds=settings.PROMOTION_SWEEP_RETRY_AFTER_SECONDS)
    )

    assert (soon.considered, soon.enqueued) == (0, 0)
    assert (later.considered, later.enqueued) == (1, 1)
