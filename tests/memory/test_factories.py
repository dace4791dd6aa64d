"""The memory factories build rows every read treats exactly as service-written ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memory.models import PromotionJobStatus, SessionMemory
from apps.memory.selectors import memory_recall
from apps.memory.services import memory_embed_pending
from tests.memory.factories import (
    MemoryFactory,
    PromotionJobFactory,
    SessionTurnFactory,
)
from tests.memory.helpers import remember
from tests.providers.vectors import unit_vector

RECALL = "/api/v1/memory/recall"
MEMORIES = "/api/v1/memory"


def test_a_factory_memory_satisfies_every_model_check_and_defaults_to_pending(tenant):
    memory = MemoryFactory.create(tenant=tenant)

    memory.full_clean()
    assert memory.embedding is None
    assert memory.embedded_at is None


def test_an_embedded_factory_memory_carries_the_vector_the_drain_would_write(tenant):
    written = remember(tenant, "agent-b", "The release train leaves on Thursdays.")

    made = MemoryFactory.create(
        tenant=tenant, text="The release train leaves on Thursdays.", embedded=True
    )

    made.full_clean()
    assert made.embedded_at is not None
    assert made.embedding_content_hash == written.embedding_content_hash
    assert list(made.embedding) == pytest.approx(list(written.embedding), abs=1e-6)
    # The drain leaves a factory-embedded row alone: it is not pending.
    assert memory_embed_pending(memory_ids=[str(made.pk)]).embedded == 0


def test_an_explicit_vector_marks_the_row_embedded_too(tenant):
    memory = MemoryFactory.create(tenant=tenant, embedding=unit_vector(3))

    assert memory.embedded_at is not None
    assert list(memory.embedding)[3] == 1.0


def test_semantic_recall_returns_a_factory_memory_as_it_returns_a_written_one(agent, tenant):
    text = "The staging database listens on port 5433."
    # The same text for two subjects: one through the service, one from the factory.
    remember(tenant, "agent-b", text)
    made = MemoryFactory.create(tenant=tenant, subject_id="agent-a", text=text, embedded=True)
    MemoryFactory.create(tenant=tenant, subject_id="agent-a", embedded=True)  # a distractor

    response = agent.post(RECALL, {"query": "staging database port", "mode": "semantic"})
    via_service = memory_recall(
        tenant=tenant, subject_id="agent-b", query="staging database port", mode="semantic"
    )

    assert response.status_code == 200, response.content
    top = response.json()["data"][0]
    assert top["memory"]["id"] == str(made.pk)
    assert (top["selection_reason"], top["embedding_status"]) == ("semantic", "ready")
    assert top["similarity"] == pytest.approx(via_service.results[0].similarity, abs=1e-6)


def test_keyword_recall_finds_a_pending_factory_memory_as_pending(agent, tenant):
    made = MemoryFactory.create(tenant=tenant, text="Invoices are archived every quarter.")

    response = agent.post(RECALL, {"query": "invoices archived", "mode": "keyword"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert [hit["memory"]["id"] for hit in body["data"]] == [str(made.pk)]
    assert body["data"][0]["selection_reason"] == "keyword_pending"
    assert body["data"][0]["embedding_status"] == "pending"
    assert body["meta"]["pending_searched"] == 1


def test_semantic_recall_cannot_rank_a_pending_factory_memory(agent, tenant):
    MemoryFactory.create(tenant=tenant, text="Invoices are archived every quarter.")

    response = agent.post(RECALL, {"query": "invoices archived", "mode": "semantic"})

    assert response.status_code == 200, response.content
    assert response.json()["data"] == []


def test_the_memory_list_shows_factory_memories_of_the_caller_only(agent, tenant, other_tenant):
    mine = MemoryFactory.create_batch(2, tenant=tenant)
    MemoryFactory.create(tenant=tenant, subject_id="agent-b")
    MemoryFactory.create(tenant=other_tenant)

    response = agent.get(MEMORIES)

    assert response.status_code == 200, response.content
    assert {item["id"] for item in response.json()["data"]} == {str(m.pk) for m in mine}


def test_session_turns_read_back_in_creation_order_and_expire_by_trait(tenant):
    turns = SessionTurnFactory.create_batch(3, tenant=tenant)
    expired = SessionTurnFactory.create(tenant=tenant, session_id="old", expired=True)

    for turn in [*turns, expired]:
        turn.full_clean()
    in_order = SessionMemory.objects.filter(tenant=tenant, session_id="session-1").order_by("seq")
    assert [t.pk for t in in_order] == [t.pk for t in turns]
    assert expired.expires_at < timezone.now() < turns[0].expires_at
    assert turns[0].expires_at - timezone.now() > timedelta(minutes=59)


def test_promotion_jobs_get_a_session_each_and_finished_at_when_finished(tenant):
    queued = PromotionJobFactory.create_batch(2, tenant=tenant)
    failed = PromotionJobFactory.create(tenant=tenant, status=PromotionJobStatus.FAILED)

    for job in [*queued, failed]:
        job.full_clean()
    assert queued[0].session_id != queued[1].session_id
    assert queued[0].finished_at is None
    assert failed.finished_at is not None
