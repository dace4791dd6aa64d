"""render_many: the process's one serializer per class renders exactly what DRF would."""

import datetime
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.utils import timezone

from apps.core.api.serializers import render_many
from apps.memory.apis.common import MemoryOutputSerializer
from tests.memory.factories import memory_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def memories(tenant):
    return [
        memory_row(tenant, "a", "tea in the garden", tags=["home"], metadata={"session": "1"}),
        memory_row(tenant, "a", "kayak on friday", embedded=False, confidence=0.5),
        memory_row(tenant, "a", "violin lessons", source_turn_seqs=[3, 4], compiler="heuristic"),
    ]


def test_it_renders_what_a_fresh_many_serializer_renders(memories):
    expected = list(MemoryOutputSerializer(memories, many=True).data)

    assert render_many(MemoryOutputSerializer, memories) == expected
    assert [row["embedding_status"] for row in expected] == ["ready", "pending", "ready"]


def test_threads_sharing_the_renderer_each_get_their_own_rows(memories):
    expected = {str(memory.pk): MemoryOutputSerializer(memory).data for memory in memories}

    def render(index):
        memory = memories[index % len(memories)]
        return render_many(MemoryOutputSerializer, [memory] * 20)

    with ThreadPoolExecutor(max_workers=8) as pool:
        rendered = list(pool.map(render, range(64)))

    for index, rows in enumerate(rendered):
        memory = memories[index % len(memories)]
        assert rows == [expected[str(memory.pk)]] * 20


def test_timestamps_are_utc_whatever_zone_is_active(memories):
    memory = memories[0]
    memory.last_recalled_at = datetime.datetime(2026, 7, 1, 12, 30, tzinfo=datetime.UTC)

    with timezone.override("Europe/Paris"):
        (rendered,) = render_many(MemoryOutputSerializer, [memory])

    assert rendered["last_recalled_at"] == "2026-07-01T12:30:00Z"
    assert rendered["created_at"].endswith("Z")
