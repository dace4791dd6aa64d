"""One INSERT for model instances built in Python (apps/core/db/inserts.py)."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.db.inserts import insert_instances
from apps.core.db.routers import PRIMARY
from apps.memory.models import Memory, MemoryTombstone
from tests.core.db.conftest import preparing_on_second_run
from tests.memory.factories import MemoryFactory
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

# Every column a client can set, with values that need quoting or typing with care.
AWKWARD = {
    "text": 'It\'s "quoted", has a \\ and a newline\n and ünïcode ☕',
    "context": "a date: 2023-05-08",
    "tags": ["a", "it's", "ünï"],
    "metadata": {"session": "3", "nested": {"list": [1, 2.5, None, True]}, "quote": "'"},
    "source_turn_seqs": [3, 40_000, 2**40],
    "confidence": 0.25,
    "occurred_at": datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    "source": "promoted",
    "compiler": "heuristic",
    "context_thread": "session:3",
    "thread_seq": 7,
}
MADE_HERE = {"id", "created_at", "updated_at", "embedding_content_hash"}


def _stored(memory):
    row = Memory.objects.get(pk=memory.pk)
    return {
        field.attname: getattr(row, field.attname)
        for field in Memory._meta.concrete_fields
        if field.attname not in MADE_HERE
    }


def test_rows_read_back_as_bulk_create_writes_them(tenant):
    project = ProjectFactory.create(tenant=tenant)
    ours = MemoryFactory.build(tenant=tenant, subject_id="a", project=project, **AWKWARD)
    django = MemoryFactory.build(tenant=tenant, subject_id="b", project=project, **AWKWARD)

    insert_instances([ours], using=PRIMARY)
    Memory.objects.bulk_create([django])

    stored = _stored(ours)
    assert stored == {**_stored(django), "subject_id": "a"}
    assert stored["text"] == AWKWARD["text"]
    assert stored["metadata"] == AWKWARD["metadata"]
    assert stored["source_turn_seqs"] == AWKWARD["source_turn_seqs"]


def test_a_batch_is_one_statement_and_its_instances_are_saved(tenant):
    memories = [
        MemoryFactory.build(tenant=tenant, subject_id="a", text=f"note {n}") for n in range(40)
    ]
    assert all(memory.created_at is None for memory in memories)

    with CaptureQueriesContext(connection) as captured:
        insert_instances(memories, using=PRIMARY)

    assert len(captured.captured_queries) == 1
    assert Memory.objects.filter(tenant=tenant, subject_id="a").count() == 40
    # auto_now_add stamped each instance, and they are now rows, not new instances.
    assert all(memory.created_at is not None for memory in memories)
    assert not any(memory._state.adding for memory in memories)
    assert {memory._state.db for memory in memories} == {PRIMARY}
    assert Memory.objects.get(pk=memories[3].pk).created_at == memories[3].created_at


def test_a_column_left_to_its_database_default_is_refused_before_anything_is_sent(tenant):
    complete = MemoryFactory.build(tenant=tenant, subject_id="a", text="complete")
    # occurred_at has only a database default: nothing is read back to learn its value.
    unset = Memory(tenant=tenant, subject_id="a", text="unset", embedding_content_hash="x")

    with pytest.raises(ValueError, match="occurred_at"):
        insert_instances([complete, unset], using=PRIMARY)

    assert not Memory.objects.filter(tenant=tenant).exists()


def test_instances_of_two_models_are_refused(tenant):
    memory = MemoryFactory.build(tenant=tenant, subject_id="a", text="m")
    tombstone = MemoryTombstone(tenant=tenant, subject_id="a", content_hash="h")

    with pytest.raises(TypeError):
        insert_instances([memory, tombstone], using=PRIMARY)

    assert not Memory.objects.filter(tenant=tenant).exists()


def test_a_repeated_insert_is_prepared_once_on_the_connection(tenant):
    rows = 13  # a statement no other test runs, so it is not prepared already
    columns = len([f for f in Memory._meta.concrete_fields if not f.generated])

    def prepared():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements "
                "WHERE statement LIKE 'INSERT INTO \"memory_memory\"%%' "
                "AND cardinality(parameter_types) = %s",
                [rows * columns],
            )
            return cursor.fetchone()[0]

    with preparing_on_second_run(PRIMARY):
        assert prepared() == 0
        for run in range(3):
            insert_instances(
                [
                    MemoryFactory.build(tenant=tenant, subject_id="a", text=f"{run} {n}")
                    for n in range(rows)
                ],
                using=PRIMARY,
            )

        assert prepared() == 1
    assert Memory.objects.filter(tenant=tenant).count() == 3 * rows
