"""Forget cascades: graduated articles, tombstones against re-promotion and re-graduation,
history bounded by (tenant, subject), kept Idempotency-Key responses, and an explicit
re-remember that is allowed."""

import uuid

import pytest
from django.utils import timezone

from apps.extraction.promotion.types import Candidate
from apps.knowledge.history import RecallHistory
from apps.knowledge.models import Article
from apps.knowledge.selectors import knowledge_search
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import Forgotten
from apps.memory.models import Memory, MemoryTombstone
from apps.memory.services import (
    MemoryDraft,
    memory_forget,
    memory_forget_any,
    memory_graduate,
    memory_graduation_sweep,
    memory_supersede,
    promotion_persist,
)
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.models import IdempotencyRecord
from tests.knowledge.helpers import publish
from tests.memory.helpers import remember

FACT = "The billing service retries webhooks three times."


def _graduated(tenant, subject="agent-a", text=FACT):
    memory = remember(tenant, subject, text)
    Memory.objects.filter(pk=memory.pk).update(recall_count=5)
    article = memory_graduate(tenant=tenant, subject_id=subject, memory_id=memory.pk).article
    return memory, article


def _persist(tenant, subject, text):
    return promotion_persist(
        tenant=tenant,
        subject_id=subject,
        session_id="s1",
        candidates=[Candidate(text=text, confidence=0.9, kind="fact", source_seqs=(1,))],
        compiler="heuristic",
    )


def test_forget_deletes_the_article_graduated_from_the_memory(tenant):
    memory, article = _graduated(tenant)

    result = memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    assert not Article.objects.filter(pk=article.pk).exists()
    assert result.articles_deleted == [article.pk]
    hits = knowledge_search(tenant=tenant, viewer=Viewer.for_subject("agent-a"), query="webhooks")
    assert hits.results == []


def test_forget_leaves_an_article_the_graduation_only_deduplicated_into(tenant):
    shared = publish(tenant, "Webhook retries", FACT)
    memory = remember(tenant, "agent-a", FACT)
    graduation = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)
    assert graduation.article.pk == shared.pk  # the gate returned the existing article

    result = memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    shared.refresh_from_db()
    assert (shared.status, result.articles_deleted) == ("published", [])


def test_forget_tombstones_the_fingerprint_and_no_text(tenant):
    memory = remember(tenant, "agent-a", FACT)

    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    row = MemoryTombstone.objects.get(tenant=tenant)
    assert (row.subject_id, row.content_hash) == ("agent-a", embedding_content_hash(FACT))
    assert FACT not in str(list(MemoryTombstone.objects.values()))


def test_promotion_does_not_recreate_a_forgotten_fact(tenant):
    first = _persist(tenant, "agent-a", FACT)
    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=first.memory_ids[0])

    again = _persist(tenant, "agent-a", FACT)

    assert (again.promoted, again.forgotten) == (0, 1)
    assert Memory.objects.filter(tenant=tenant).count() == 0


def test_a_tombstone_is_per_subject(tenant):
    first = _persist(tenant, "agent-a", FACT)
    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=first.memory_ids[0])

    other = _persist(tenant, "agent-b", FACT)

    assert (other.promoted, other.forgotten) == (1, 0)


def test_an_explicit_remember_of_the_same_text_is_allowed_and_clears_the_tombstone(tenant):
    memory = remember(tenant, "agent-a", FACT)
    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    again = remember(tenant, "agent-a", FACT)

    assert Memory.objects.get(tenant=tenant).pk == again.pk
    assert not MemoryTombstone.objects.filter(tenant=tenant).exists()
    Memory.objects.filter(pk=again.pk).update(recall_count=5)
    graduation = memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=again.pk)
    assert graduation.created is True


def test_graduation_refuses_a_row_whose_text_was_forgotten(tenant):
    # Only an import can put such a row back; it must not reach the wiki.
    memory = remember(tenant, "agent-a", FACT)
    MemoryTombstone.objects.create(
        tenant=tenant, subject_id="agent-a", content_hash=memory.embedding_content_hash
    )
    Memory.objects.filter(pk=memory.pk).update(recall_count=5)

    with pytest.raises(Forgotten) as raised:
        memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)
    sweep = memory_graduation_sweep()

    assert raised.value.code == "forgotten"
    assert (sweep.considered, sweep.graduated) == (0, 0)
    assert not Article.objects.filter(tenant=tenant).exists()


def test_forget_deletes_history_inside_the_subject_only(tenant):
    # An import once let a row of agent-b claim to be an older version of agent-a's memory.
    mine = remember(tenant, "agent-a", "v2 of my fact")
    theirs = remember(tenant, "agent-b", "their own fact")
    Memory.objects.filter(pk=theirs.pk).update(superseded_by=mine)

    result = memory_forget(tenant=tenant, subject_id="agent-a", memory_id=mine.pk)

    assert result.memories_deleted == 1
    assert Memory.objects.filter(pk=theirs.pk).exists()
    assert not MemoryTombstone.objects.filter(subject_id="agent-b").exists()


def test_forget_tombstones_every_version_of_the_fact(tenant):
    v1 = remember(tenant, "agent-a", "Deploys are on Fridays.")
    v2 = memory_supersede(
        tenant=tenant,
        subject_id="agent-a",
        memory_id=v1.pk,
        draft=MemoryDraft(text="Deploys are on Thursdays."),
    )

    memory_forget_any(tenant=tenant, memory_id=v2.pk)

    assert set(MemoryTombstone.objects.values_list("subject_id", "content_hash")) == {
        ("agent-a", embedding_content_hash("Deploys are on Fridays.")),
        ("agent-a", embedding_content_hash("Deploys are on Thursdays.")),
    }


def test_forget_drops_the_subjects_shown_history(tenant, django_capture_on_commit_callbacks):
    memory = remember(tenant, "agent-a", FACT)
    mine = RecallHistory(tenant.pk, "agent-a", "s1", 3600)
    peer = RecallHistory(tenant.pk, "agent-b", "s1", 3600)
    mine.mark(["article-1"])
    peer.mark(["article-1"])

    with django_capture_on_commit_callbacks(execute=True):
        memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    assert RecallHistory(tenant.pk, "agent-a", "s1", 3600).seen(["article-1"]) == set()
    assert RecallHistory(tenant.pk, "agent-b", "s1", 3600).seen(["article-1"]) == {"article-1"}


def test_a_retried_write_after_forget_does_not_replay_the_forgotten_text(agent, tenant, mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    first = agent.post("/api/v1/memory", {"text": FACT}, HTTP_IDEMPOTENCY_KEY="key-1")
    kept = agent.post("/api/v1/memory", {"text": "Prefers tabs"}, HTTP_IDEMPOTENCY_KEY="key-2")
    forgotten_id = first.json()["data"]["id"]

    assert agent.delete(f"/api/v1/memory/{forgotten_id}").status_code == 204
    retry = agent.post("/api/v1/memory", {"text": FACT}, HTTP_IDEMPOTENCY_KEY="key-1")
    kept_retry = agent.post(
        "/api/v1/memory", {"text": "Prefers tabs"}, HTTP_IDEMPOTENCY_KEY="key-2"
    )

    # The retry ran afresh (the agent sent the text again) instead of replaying the old row.
    assert (retry.status_code, retry["Idempotent-Replayed"]) == (201, "false")
    assert retry.json()["data"]["id"] != forgotten_id
    assert (kept_retry["Idempotent-Replayed"], kept_retry.json()) == ("true", kept.json())
    assert IdempotencyRecord.objects.filter(tenant=tenant).count() == 2


def test_forget_drops_every_kept_response_naming_the_fact_and_its_article(tenant):
    memory, article = _graduated(tenant)
    names = {
        "write": {"data": {"id": str(memory.pk), "text": FACT}},
        "graduation": {"data": {"article": {"id": str(article.pk), "title": FACT}}},
        "unrelated": {"data": {"id": str(uuid.uuid4()), "text": "Prefers tabs"}},
    }
    for key, body in names.items():
        IdempotencyRecord.objects.create(
            tenant=tenant,
            subject_id="agent-a",
            key=key,
            fingerprint="f",
            claimed_at=timezone.now(),
            status_code=201,
            response_body=body,
        )
    IdempotencyRecord.objects.create(
        tenant=tenant,
        subject_id="agent-b",
        key="write",
        fingerprint="f",
        claimed_at=timezone.now(),
        status_code=201,
        response_body=names["write"],
    )

    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)

    left = set(IdempotencyRecord.objects.values_list("subject_id", "key"))
    assert left == {("agent-a", "unrelated"), ("agent-b", "write")}
