"""A custody halt freezes the tenant's data against background jobs too.

Promotion and graduation write nothing for a halted tenant, and the prune keeps its expired
turns until the halt is lifted. Embedding a pending row is not a change of the tenant's data
(the row's content is what the agent wrote; the vector only makes it findable), so the
backfill goes on embedding a halted tenant's rows.
"""

from datetime import timedelta

from django.utils import timezone

from apps.knowledge.models import Article
from apps.memory.models import Memory, PromotionJob, SessionMemory, SessionPromotion
from apps.memory.services import (
    memory_backfill_embeddings,
    memory_graduation_sweep,
    promotion_request,
    promotion_run,
    promotion_sweep,
    session_prune_expired,
)
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_halt, tenant_resume
from tests.memory.helpers import remember
from tests.memory.promotion_pipeline.conftest import add_turns, fact


def _memory_rows(tenant):
    return list(
        Memory.objects.filter(tenant=tenant)
        .order_by("pk")
        .values_list("pk", "text", "graduated_at", "superseded_by_id", "recall_count")
    )


def test_a_job_queued_before_the_halt_writes_nothing(tenant, promoter):
    add_turns(tenant, "agent-a", "s1", "I deploy with Argo CD", "Noted.")
    promoter.says(fact("The user deploys with Argo CD."))
    job_id = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1").job_id
    assert job_id is not None
    tenant_halt(tenant=tenant, reason="investigation")

    status = promotion_run(job_id=job_id)

    assert status == "dropped"
    assert PromotionJob.objects.get(pk=job_id).outcome == {"reason": "tenant_halted"}
    assert Memory.objects.filter(tenant=tenant).count() == 0
    assert SessionPromotion.objects.filter(tenant=tenant).count() == 0
    assert promoter.calls == []


def test_a_halt_during_the_compile_stops_the_write(tenant, promoter, monkeypatch):
    add_turns(tenant, "agent-a", "s1", "I deploy with Argo CD", "Noted.")
    promoter.says(fact("The user deploys with Argo CD."))
    job_id = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1").job_id
    from apps.extraction.promotion.compiler import compile_turns as real_compile

    def compile_then_halt(*args, **kwargs):
        candidates = real_compile(*args, **kwargs)
        tenant_halt(tenant=Tenant.objects.get(pk=tenant.pk))
        return candidates

    monkeypatch.setattr("apps.memory.services.promotion.compile_turns", compile_then_halt)
    status = promotion_run(job_id=job_id)

    assert status == "dropped"
    assert Memory.objects.filter(tenant=tenant).count() == 0
    assert SessionPromotion.objects.filter(tenant=tenant).count() == 0


def test_the_promotion_sweep_skips_a_halted_tenant_until_it_resumes(tenant, other_tenant):
    for configured in (tenant, other_tenant):
        add_turns(configured, "agent-a", "s1", "I deploy with Argo CD", "Noted.")
    tenant_halt(tenant=tenant)
    later = timezone.now() + timedelta(minutes=20)

    halted = promotion_sweep(now=later)
    jobs_while_halted = list(PromotionJob.objects.values_list("tenant_id", flat=True))
    tenant_resume(tenant=tenant)
    resumed = promotion_sweep(now=later)

    assert (halted.considered, jobs_while_halted) == (1, [other_tenant.pk])
    assert resumed.enqueued == 1
    assert PromotionJob.objects.filter(tenant=tenant).count() == 1


def test_the_graduation_sweep_leaves_a_halted_tenant_alone(tenant, other_tenant):
    for configured in (tenant, other_tenant):
        memory = remember(configured, "agent-a", "Deploys need a canary.")
        Memory.objects.filter(pk=memory.pk).update(recall_count=5)
    tenant_halt(tenant=tenant)
    before = _memory_rows(tenant)

    result = memory_graduation_sweep()

    assert result.graduated == 1
    assert _memory_rows(tenant) == before
    assert Article.objects.filter(tenant=tenant).count() == 0
    assert Article.objects.filter(tenant=other_tenant).count() == 1


def test_the_prune_keeps_a_halted_tenants_expired_turns_until_resume(
    tenant, other_tenant, settings
):
    for configured in (tenant, other_tenant):
        add_turns(configured, "agent-a", "s1", "expiring turn", "another")
    tenant_halt(tenant=tenant)
    # Past the promotion hold too, so the only thing keeping a turn is the halt.
    past_expiry = timezone.now() + timedelta(
        hours=2, seconds=settings.SESSION_PROMOTION_HOLD_MAX_SECONDS
    )

    while_halted = session_prune_expired(now=past_expiry)
    kept = SessionMemory.objects.filter(tenant=tenant).count()
    tenant_resume(tenant=tenant)
    after_resume = session_prune_expired(now=past_expiry)

    assert (while_halted.total, kept) == (2, 2)
    assert SessionMemory.objects.filter(tenant=other_tenant).count() == 0
    assert after_resume.total == 2
    assert SessionMemory.objects.count() == 0


def test_the_embedding_backfill_still_embeds_a_halted_tenants_pending_rows(tenant):
    memory = remember(tenant, "agent-a", "Written just before the halt.", embed=False)
    tenant_halt(tenant=tenant)

    memory_backfill_embeddings()

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.embedding is not None
    assert stored.text == "Written just before the halt."
