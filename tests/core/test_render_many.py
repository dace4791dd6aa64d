"""render_many: the process's one serializer per class renders exactly what DRF would."""

import datetime
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.utils import timezone
from rest_framework import serializers

from apps.core.api.serializers import compile_representation, render_many
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


class _Owner:
    def __init__(self, name):
        self.name = name


class _Row:
    """Attributes of every kind DRF reads differently from a plain ``getattr``."""

    def __init__(self, *, owner, note=None):
        self.title = 7
        self.owner = owner
        self.tags = ["a", None, 3]
        self.extra = {1: "one", "two": None}
        self.ratio = "0.5"
        self.identifier = uuid.UUID("00000000-0000-4000-8000-000000000001")
        if note is not None:
            self.note = note

    def shout(self):
        return "loud"


class _TrickySerializer(serializers.Serializer):
    title = serializers.CharField()
    owner_name = serializers.CharField(source="owner.name", allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    extra = serializers.DictField()
    ratio = serializers.FloatField()
    identifier = serializers.UUIDField()
    hex_identifier = serializers.UUIDField(source="identifier", format="hex")
    shout = serializers.CharField()
    note = serializers.CharField(required=False)
    fallback = serializers.CharField(default="kept")
    flag = serializers.BooleanField(default=True)
    caption = serializers.SerializerMethodField()

    def get_caption(self, row):
        return f"row {row['title'] if isinstance(row, dict) else row.title}"


@pytest.mark.parametrize(
    ("_case", "row"),
    [
        ("every attribute", _Row(owner=_Owner("ann"), note="hi")),
        ("a missing optional attribute is left out", _Row(owner=_Owner("bob"))),
        ("a null relation renders null", _Row(owner=None)),
    ],
)
def test_a_compiled_plan_renders_what_the_serializer_renders(_case, row):
    serializer = _TrickySerializer()

    rendered = compile_representation(serializer)(row)

    assert rendered == serializer.to_representation(row)
    assert list(rendered) == list(serializer.to_representation(row))


def test_a_mapping_renders_through_the_serializer():
    serializer = _TrickySerializer()
    row = {"title": 1, "owner": {"name": "x"}, "tags": [], "extra": {}, "ratio": 1}
    row |= {"identifier": uuid.uuid4(), "shout": "s"}

    assert compile_representation(serializer)(row) == serializer.to_representation(row)


def test_a_memory_with_every_optional_value_renders_as_the_serializer_does(tenant):
    old = memory_row(tenant, "a", "tea in the garden")
    new = memory_row(tenant, "a", "coffee in the garden", metadata={"n": [1, 2]})
    old.superseded_by = new
    old.superseded_at = old.valid_to = timezone.now()
    old.supersedes = [new.pk]
    old.conflicts_with = [new.pk]
    old.last_recalled_at = timezone.now() - datetime.timedelta(minutes=5)

    assert render_many(MemoryOutputSerializer, [old, new]) == [
        MemoryOutputSerializer(memory).data for memory in (old, new)
    ]
