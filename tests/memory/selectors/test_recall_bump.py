"""The recall-count hotness signal: off the hot path, floored, cooled down, never on fallback."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memory import recall_bump
from apps.memory.models import Memory
from apps.memory.recall_bump import (
    bump_recall_counts,
    schedule_recall_bump,
    wait_for_pending_bumps,
)
from apps.memory.selectors import RecallResult, memory_recall
from apps.memory.services import memory_recall_record
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def served_recall(**kwargs) -> RecallResult:
    """A recall as the API serves it: the read, then what serving it records."""
    result = memory_recall(**kwargs)
    memory_recall_record(result=result)
    return result


def _count(memory):
    memory.refresh_from_db()
    return memory.recall_count


def test_a_relevant_recall_bumps_once_per_cooldown(tenant):
    hot = remember(tenant, "a", "editor dark mode preference")

    served_recall(tenant=tenant, subject_id="a", query="editor dark mode preference", limit=5)
    wait_for_pending_bumps()
    served_recall(tenant=tenant, subject_id="a", query="editor dark mode preference", limit=5)
    wait_for_pending_bumps()

    assert _count(hot) == 1
    assert hot.last_recalled_at is not None


def test_recall_below_the_relevance_floor_does_not_bump(tenant, settings):
    weak = remember(tenant, "a", "editor dark mode preference")
    settings.MEMORY_RECALL_BUMP_MIN_SCORE = 0.99

    result = served_recall(tenant=tenant, subject_id="a", query="editor theme", limit=5)
    wait_for_pending_bumps()

    # The floor is on the vector similarity (a hybrid score is a fused rank, not a relevance).
    assert result.results[0].similarity is not None
    assert result.results[0].similarity < 0.99
    assert _count(weak) == 0


def test_fallback_recall_never_bumps(tenant):
    memory = remember(tenant, "a", "editor dark mode preference")
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()

    result = served_recall(tenant=tenant, subject_id="a", query="editor dark mode", limit=5)
    wait_for_pending_bumps()

    assert result.meta["fallback"] is True
    assert [hit.memory.pk for hit in result.results] == [memory.pk]
    assert _count(memory) == 0


def test_cooldown_expiry_allows_the_next_bump(tenant):
    memory = remember(tenant, "a", "x")
    bump_recall_counts(memory_ids=[memory.pk])
    Memory.objects.filter(pk=memory.pk).update(
        last_recalled_at=timezone.now() - timedelta(seconds=3601)
    )

    bumped = bump_recall_counts(memory_ids=[memory.pk])

    assert bumped == 1
    assert _count(memory) == 2


def test_bumps_over_the_cap_are_dropped_not_queued(tenant, settings):
    memories = [remember(tenant, "a", f"note {n}") for n in range(3)]
    settings.MEMORY_RECALL_BUMP_MAX_PENDING = 2

    scheduled = schedule_recall_bump(memory_ids=[memory.pk for memory in memories])
    wait_for_pending_bumps()

    assert scheduled is False
    assert [_count(memory) for memory in memories] == [0, 0, 0]


def test_many_recalls_are_bumped_by_one_statement_each_drain(tenant, mocker):
    """Ids queued while the bump thread is busy wait and go out together in one UPDATE."""
    memories = [remember(tenant, "a", f"note {n}") for n in range(20)]
    bump = mocker.patch.object(
        recall_bump, "bump_recall_counts", wraps=recall_bump.bump_recall_counts
    )

    # Hold the queue's lock so every id is queued before the thread can take any.
    with recall_bump._queue._condition:
        for memory in memories:
            assert schedule_recall_bump(memory_ids=[memory.pk]) is True
    wait_for_pending_bumps()

    assert bump.call_count == 1
    assert set(bump.call_args.kwargs["memory_ids"]) == {memory.pk for memory in memories}
    assert [_count(memory) for memory in memories] == [1] * 20


def test_an_id_bumped_within_the_cooldown_is_not_queued_again(tenant):
    memory = remember(tenant, "a", "note")

    first = schedule_recall_bump(memory_ids=[memory.pk])
    wait_for_pending_bumps()
    second = schedule_recall_bump(memory_ids=[memory.pk])
    wait_for_pending_bumps()

    assert (first, second) == (True, False)
    assert _count(memory) == 1


def test_the_recall_selector_alone_bumps_nothing(tenant):
    hot = remember(tenant, "a", "editor dark mode preference")

    result = memory_recall(tenant=tenant, subject_id="a", query="editor dark mode preference")
    wait_for_pending_bumps()

    assert result.results[0].memory.pk == hot.pk
    assert _count(hot) == 0
