import pytest
from celery.exceptions import Retry

from apps.memory.models import Memory
from apps.memory.services import memory_backfill_embeddings, memory_embed_pending
from apps.memory.tasks import backfill_embeddings_task, embed_memories_task
from tests.memory.helpers import remember


def _break(tenant):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


def test_task_embeds_pending_rows_and_is_idempotent(tenant):
    memory = remember(tenant, "a", "a pending fact", embed=False)

    embed_memories_task.apply(args=[[str(memory.pk)]]).get()
    first_vector = Memory.objects.get(pk=memory.pk).embedding
    again = memory_embed_pending(memory_ids=[str(memory.pk)])

    assert first_vector is not None
    assert len(first_vector) == 384
    assert again.embedded == 0


def test_provider_outage_snoozes_the_task_and_loses_nothing(tenant, mocker):
    memory = remember(tenant, "a", "written during an outage", embed=False)
    _break(tenant)
    retry = mocker.patch.object(embed_memories_task, "retry", side_effect=Retry())

    with pytest.raises(Retry):
        embed_memories_task.apply(args=[[str(memory.pk)]], throw=True).get()

    assert retry.call_args.kwargs == {"countdown": 30}
    assert Memory.objects.get(pk=memory.pk).embedding is None


def test_backfill_embeds_rows_once_the_provider_recovers(tenant, other_tenant):
    stuck = remember(tenant, "a", "stuck while down", embed=False)
    elsewhere = remember(other_tenant, "a", "another tenant's pending row", embed=False)
    _break(tenant)

    during = memory_backfill_embeddings()
    tenant.embedding_provider = ""
    tenant.save()
    backfill_embeddings_task.apply().get()

    assert during.embedded == 1  # the healthy tenant's row
    assert during.unavailable == {str(tenant.pk): "provider_error"}
    assert Memory.objects.get(pk=stuck.pk).embedding is not None
    assert Memory.objects.get(pk=elsewhere.pk).embedding is not None


def test_memory_output_reports_embedding_status(agent, tenant):
    pending = remember(tenant, "agent-a", "not yet", embed=False)
    ready = remember(tenant, "agent-a", "already")

    listed = {m["id"]: m["embedding_status"] for m in agent.get("/api/v1/memory").json()["data"]}

    assert listed == {str(pending.pk): "pending", str(ready.pk): "ready"}
