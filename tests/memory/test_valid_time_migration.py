"""Migrations 0028-0030 on rows written before memories carried valid time: the backfill
(0029) sets ``valid_from`` from ``occurred_at``, ends each superseded row where its successor
begins and records what each successor replaced; 0028's trigger defaults ``valid_from`` for
an insert that leaves it out."""

import importlib
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.db import connection

from apps.memory.models import Memory, MemorySource
from tests.memory.factories import MemoryFactory

pytestmark = pytest.mark.django_db

backfill = importlib.import_module("apps.memory.migrations.0029_memory_validity_backfill")

MARCH = datetime(2024, 3, 1, tzinfo=UTC)
JUNE = datetime(2024, 6, 1, tzinfo=UTC)


def _as_before_0028():
    """The table as rows written before 0028 left it (inside the test's transaction, which
    rolls every statement back): no valid time, nothing recorded on successors."""
    with connection.cursor() as cursor:
        # Run the deferred foreign-key checks of the rows just written: a table with pending
        # trigger events cannot be altered.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE memory_memory DISABLE TRIGGER memory_valid_from_default")
        cursor.execute("ALTER TABLE memory_memory DROP CONSTRAINT memory_validity_ordered")
        cursor.execute("ALTER TABLE memory_memory ALTER COLUMN valid_from DROP NOT NULL")
        cursor.execute(
            "UPDATE memory_memory SET valid_from = NULL, valid_to = NULL, supersedes = '{}', "
            "supersede_reason = ''"
        )


def test_the_backfill_derives_valid_time_and_supersede_records(tenant, monkeypatch):
    monkeypatch.setattr(backfill, "BATCH_SIZE", 2)  # several batches of each pass
    loose = [MemoryFactory.create(tenant=tenant, occurred_at=MARCH) for _ in range(3)]
    old = MemoryFactory.create(tenant=tenant, text="Lives in Berlin", occurred_at=MARCH)
    new = MemoryFactory.create(tenant=tenant, text="Lives in Lisbon", occurred_at=JUNE)
    earlier = MemoryFactory.create(
        tenant=tenant, text="promoted, said later", source=MemorySource.PROMOTED, occurred_at=JUNE
    )
    paraphrase = MemoryFactory.create(
        tenant=tenant, text="promoted again", source=MemorySource.PROMOTED, occurred_at=MARCH
    )
    Memory.objects.filter(pk=old.pk).update(superseded_by=new)
    Memory.objects.filter(pk=earlier.pk).update(superseded_by=paraphrase)
    _as_before_0028()

    backfill.backfill(None, SimpleNamespace(connection=connection))

    rows = {m.pk: m for m in Memory.objects.filter(tenant=tenant)}
    assert all(rows[m.pk].valid_from == MARCH and rows[m.pk].valid_to is None for m in loose)
    assert (rows[old.pk].valid_from, rows[old.pk].valid_to) == (MARCH, JUNE)
    assert (rows[new.pk].supersedes, rows[new.pk].supersede_reason) == ([old.pk], "explicit")
    # Its successor began before it did: an empty interval, never an inverted one.
    assert rows[earlier.pk].valid_to == rows[earlier.pk].valid_from == JUNE
    assert (rows[paraphrase.pk].supersedes, rows[paraphrase.pk].supersede_reason) == (
        [earlier.pk],
        "paraphrase",
    )

    backfill.backfill(None, SimpleNamespace(connection=connection))  # a re-run changes nothing
    assert {m.pk: (m.valid_from, m.valid_to, m.supersedes) for m in Memory.objects.all()} == {
        pk: (m.valid_from, m.valid_to, m.supersedes) for pk, m in rows.items()
    }


def test_an_insert_that_leaves_valid_from_out_gets_occurred_at(tenant):
    memory = MemoryFactory.create(tenant=tenant, occurred_at=MARCH)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO memory_memory (id, tenant_id, subject_id, text, embedding_content_hash, "
            "confidence, source, source_session_id, source_turn_seqs, compiler, occurred_at, "
            "tags, metadata, recall_count, graduated_global, created_at, updated_at) "
            "SELECT gen_random_uuid(), tenant_id, subject_id, 'copied', embedding_content_hash, "
            "confidence, source, source_session_id, source_turn_seqs, compiler, %s, tags, "
            "metadata, 0, false, now(), now() FROM memory_memory WHERE id = %s "
            "RETURNING valid_from",
            [JUNE, memory.pk],
        )
        (valid_from,) = cursor.fetchone()

    assert valid_from == JUNE
