"""Coalesced embedding: writes wake one drain per tenant; the drain embeds in batches."""

import threading
from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.db import connections
from django.utils import timezone

from apps.memory.models import EmbeddingWake, Memory
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    MemoryDraft,
    memory_backfill_embeddings,
    memory_drain_embeddings,
    memory_remember,
    memory_wake_embeddings,
)
from apps.memory.tasks import drain_embeddings_task
from apps.providers.embeddings import EmbeddingsUnavailable, embed_texts
from apps.providers.exceptions import ProvidersErrorCode
from config.celery import app as celery_app
from tests.memory.helpers import remember

EMBED_TEXTS = "apps.memory.services.embedding.embed_texts"
DELAY = "apps.memory.queue.DRAIN_EMBEDDINGS.apply_async"


@pytest.fixture
def delay(mocker):
    return mocker.patch(DELAY)


@pytest.fixture
def calls(mocker):
    """Every provider call the drain makes, as the list of texts it sent."""
    sent = []
    lock = threading.Lock()

    def spy(config, texts):
        with lock:
            sent.append(list(texts))
        return embed_texts(config, texts)

    mocker.patch(EMBED_TEXTS, side_effect=spy)
    return sent


def _pending(tenant):
    return Memory.objects.filter(tenant=tenant, embedding__isnull=True).count()


def _break(tenant):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


def test_a_burst_of_writes_wakes_one_drain(tenant, delay, django_capture_on_commit_callbacks):
    for index in range(20):
        with django_capture_on_commit_callbacks(execute=True):
            memory_remember(tenant=tenant, subject_id="a", draft=MemoryDraft(f"fact {index}"))

    delay.assert_called_once_with(
        args=[str(tenant.pk)], countdown=settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS
    )
    assert EmbeddingWake.objects.filter(tenant=tenant).exists()


def test_a_duplicate_wake_is_a_no_op_until_the_drain_starts(tenant, other_tenant, delay):
    assert memory_wake_embeddings(tenant_id=tenant.pk) is True
    assert memory_wake_embeddings(tenant_id=tenant.pk) is False
    assert memory_wake_embeddings(tenant_id=other_tenant.pk) is True  # markers are per tenant

    memory_drain_embeddings(tenant_id=tenant.pk)

    assert memory_wake_embeddings(tenant_id=tenant.pk) is True
    assert delay.call_count == 3


def test_a_stale_marker_no_longer_holds_wakes_back(tenant, delay):
    memory_wake_embeddings(tenant_id=tenant.pk)
    EmbeddingWake.objects.filter(tenant=tenant).update(
        due_until=timezone.now() - timedelta(seconds=1)
    )

    assert memory_wake_embeddings(tenant_id=tenant.pk) is True
    assert delay.call_count == 2


def test_a_refused_enqueue_drops_the_marker(tenant, mocker):
    mocker.patch(DELAY, side_effect=OSError("broker down"))

    with pytest.raises(OSError, match="broker down"):
        memory_wake_embeddings(tenant_id=tenant.pk)

    assert not EmbeddingWake.objects.filter(tenant=tenant).exists()


def test_the_drain_embeds_every_pending_row_in_batches(tenant, other_tenant, settings, calls):
    settings.EMBEDDING_BATCH_SIZE = 4
    rows = [remember(tenant, "a", f"fact {index}", embed=False) for index in range(10)]
    foreign = remember(other_tenant, "a", "another tenant's row", embed=False)

    run = memory_drain_embeddings(tenant_id=tenant.pk)
    again = memory_drain_embeddings(tenant_id=tenant.pk)

    assert (run.embedded, run.calls, run.more) == (10, 3, False)
    assert [len(batch) for batch in calls] == [4, 4, 2]
    assert sorted(text for batch in calls for text in batch) == sorted(r.text for r in rows)
    assert (again.embedded, again.calls) == (0, 0)
    assert _pending(tenant) == 0
    assert Memory.objects.get(pk=foreign.pk).embedding is None


def test_a_drain_is_bounded_and_wakes_a_successor(tenant, settings, delay, calls):
    settings.EMBEDDING_BATCH_SIZE = 2
    for index in range(7):
        remember(tenant, "a", f"fact {index}", embed=False)

    run = memory_drain_embeddings(tenant_id=tenant.pk, max_batches=2)

    assert (run.embedded, run.calls, run.more) == (4, 2, True)
    delay.assert_called_once_with(
        args=[str(tenant.pk)], countdown=settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS
    )
    assert _pending(tenant) == 3


def test_an_outage_stops_the_drain_and_holds_wakes_while_it_snoozes(tenant, settings, delay):
    settings.EMBEDDING_BATCH_SIZE = 2
    for index in range(3):
        remember(tenant, "a", f"written during an outage {index}", embed=False)
    _break(tenant)

    run = memory_drain_embeddings(tenant_id=tenant.pk)

    assert run.unavailable == {str(tenant.pk): "provider_error"}
    assert (run.embedded, run.calls) == (0, 1)  # stopped at the first failed call
    assert _pending(tenant) == 3
    assert sorted(Memory.objects.values_list("embedding_failures", flat=True)) == [0, 1, 1]
    wake = EmbeddingWake.objects.get(tenant=tenant)
    assert wake.due_until > timezone.now() + timedelta(seconds=30)
    assert memory_wake_embeddings(tenant_id=tenant.pk) is False
    delay.assert_not_called()


def test_the_drain_task_snoozes_on_an_outage(tenant, mocker):
    remember(tenant, "a", "written during an outage", embed=False)
    _break(tenant)
    retry = mocker.patch.object(drain_embeddings_task, "retry", side_effect=Retry())

    with pytest.raises(Retry):
        drain_embeddings_task.apply(args=[str(tenant.pk)], throw=True).get()

    assert retry.call_args.kwargs == {"countdown": 30}
    assert _pending(tenant) == 1


def test_a_row_the_provider_refuses_holds_up_neither_newer_rows_nor_its_batch(
    tenant, settings, mocker
):
    settings.MEMORY_EMBEDDING_MAX_FAILURES = 3

    def refuse_poison(config, texts):
        if any("poison" in text for text in texts):
            raise EmbeddingsUnavailable(ProvidersErrorCode.PROVIDER_ERROR, "refused")
        return embed_texts(config, texts)

    provider = mocker.patch(EMBED_TEXTS, side_effect=refuse_poison)
    poison = remember(tenant, "a", "the poison zeppelin text", embed=False)
    for index in range(3):
        remember(tenant, "a", f"innocent {index}", embed=False)

    first = memory_drain_embeddings(tenant_id=tenant.pk)  # one batch, refused: an outage?
    second = memory_drain_embeddings(tenant_id=tenant.pk)  # one per call: only poison fails
    newer = remember(tenant, "a", "written after the bad row", embed=False)
    third = memory_drain_embeddings(tenant_id=tenant.pk)
    provider.reset_mock()
    fourth = memory_drain_embeddings(tenant_id=tenant.pk)

    assert first.unavailable
    assert first.embedded == 0
    assert (second.unavailable, second.embedded) == ({}, 3)
    assert (third.unavailable, third.embedded) == ({}, 1)
    assert Memory.objects.get(pk=newer.pk).embedding is not None
    assert Memory.objects.get(pk=poison.pk).embedding_failures == 3
    assert (fourth.calls, provider.call_count) == (0, 0)  # past the limit: backfill only
    found = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode="hybrid")
    assert [(hit.memory.pk, hit.selection_reason) for hit in found.results][:1] == [
        (poison.pk, "keyword_pending")
    ]
    backfill = memory_backfill_embeddings()
    assert (backfill.calls, backfill.embedded) == (1, 0)
    assert Memory.objects.get(pk=poison.pk).embedding_failures == 4


def test_the_backfill_is_fair_across_tenants(tenant, other_tenant, settings):
    settings.EMBEDDING_BATCH_SIZE = 2
    for index in range(6):
        remember(tenant, "a", f"stuck {index}", embed=False)  # older, and its provider is down
    for index in range(3):
        remember(other_tenant, "a", f"healthy {index}", embed=False)
    _break(tenant)

    run = memory_backfill_embeddings(max_rows=4)

    # Oldest first across all tenants would have offered only the broken tenant's rows.
    assert run.embedded == 2
    assert run.unavailable == {str(tenant.pk): "provider_error"}
    assert _pending(other_tenant) == 1


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_drains_embed_every_row_exactly_once(tenant, settings, mocker):
    settings.EMBEDDING_BATCH_SIZE = 8
    rows = [remember(tenant, "a", f"fact {index}", embed=False) for index in range(40)]
    # Both drains must hold a claim at the same moment: with a plain FOR UPDATE the second
    # would wait for the first's locks and the barrier would break.
    barrier = threading.Barrier(2, timeout=20)
    sent: dict[str, list[str]] = {}
    lock = threading.Lock()

    def provider(config, texts):
        name = threading.current_thread().name
        with lock:
            first = name not in sent
            sent.setdefault(name, []).extend(texts)
        if first:
            barrier.wait()
        return embed_texts(config, texts)

    mocker.patch(EMBED_TEXTS, side_effect=provider)
    errors: list[BaseException] = []

    def drain() -> None:
        try:
            memory_drain_embeddings(tenant_id=tenant.pk)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=drain, name=f"drain-{i}") for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    texts = [text for batch in sent.values() for text in batch]
    assert sorted(texts) == sorted(row.text for row in rows)  # every row, once
    assert all(sent.get(f"drain-{i}") for i in range(2))  # both did part of the work
    assert _pending(tenant) == 0


def test_the_workers_eta_tick_is_finer_than_the_wake_delay():
    # A coarser tick (Celery's default is 1 s) would hold every woken drain past its delay.
    assert 0 < celery_app.conf.worker_timer_precision < settings.MEMORY_EMBEDDING_WAKE_DELAY_SECONDS
