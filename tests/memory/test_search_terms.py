"""The keyword leg's postings (``memory_search_term``, migration 0020) always equal what
their rows' ``search_vector`` holds, whichever path writes, rewrites or removes a row."""

import pytest
from django.db import connection

from apps.dataops.services import erase_subject
from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from apps.memory.services import (
    COPY_FROM_ROWS,
    MemoryDraft,
    memory_create_many,
    memory_forget,
    memory_supersede,
)
from tests.memory.factories import MemoryFactory, memory_row

pytestmark = pytest.mark.django_db

# Each lexeme of each row's document, counted from the tsvector itself: occurrences at
# weight A (the text) and at any other weight (the contexts), and the document's length.
FROM_DOCUMENTS = """
    SELECT memory.id, memory.tenant_id, memory.subject_id, term.lexeme,
           (SELECT count(*) FROM unnest(term.weights) AS weight WHERE weight = 'A'),
           (SELECT count(*) FROM unnest(term.weights) AS weight WHERE weight <> 'A'),
           length(memory.search_vector)
      FROM memory_memory AS memory CROSS JOIN LATERAL unnest(memory.search_vector) AS term
"""
FROM_POSTINGS = """
    SELECT memory_id, tenant_id, subject_id, lexeme, in_text, in_context, length
      FROM memory_search_term
"""


def _rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _assert_postings_match_documents():
    expected = _rows(FROM_DOCUMENTS)
    assert _rows(FROM_POSTINGS) == expected
    return expected


def _postings_of(memory):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme, in_text, in_context FROM memory_search_term WHERE memory_id = %s "
            "ORDER BY lexeme",
            [memory.pk],
        )
        return cursor.fetchall()


def _session(*texts, session="1"):
    return [
        MemoryDraft(text=text, metadata={"session": session, "session_date": "2023-05-08"})
        for text in texts
    ]


def test_a_written_row_is_indexed_with_its_counts(tenant):
    memory = memory_row(
        tenant, "a", "kayak kayak on the river", context="a kayak trip to the river delta"
    )

    assert _postings_of(memory) == [
        ("delta", 0, 1),
        ("kayak", 2, 1),
        ("river", 1, 1),
        ("trip", 0, 1),
    ]
    _assert_postings_match_documents()


def test_a_batch_insert_indexes_every_row(tenant):
    Memory.objects.bulk_create(
        MemoryFactory.build(tenant=tenant, subject_id="a", text=f"note {index} about tea")
        for index in range(50)
    )

    rows = _assert_postings_match_documents()
    assert len({row[0] for row in rows}) == 50


def test_a_large_batch_through_the_service_is_stamped_threaded_and_indexed(tenant):
    # Enough rows that the write path copies them in rather than inserting them.
    count = COPY_FROM_ROWS + 5
    drafts = [
        MemoryDraft(text=f"note {index} about tea", metadata={"session_id": "s1"})
        for index in range(count)
    ]

    created = memory_create_many(tenant=tenant, subject_id="a", drafts=drafts)

    rows = _assert_postings_match_documents()
    assert len({row[0] for row in rows}) == count
    stored = Memory.objects.filter(pk__in=[memory.pk for memory in created]).order_by("thread_seq")
    assert [memory.thread_seq for memory in stored] == list(range(1, count + 1))
    assert all(memory.created_at is not None for memory in stored)
    assert "note 1 about tea" in stored[0].derived_context
    result = memory_recall(tenant=tenant, subject_id="a", query="note 7", mode="keyword")
    assert result.results[0].memory.text == "note 7 about tea"


def test_derived_context_changes_rewrite_the_neighbours_postings(tenant):
    first, second = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_session("We went kayaking.", "The lake was cold.")
    )
    before = {lexeme: (text, ctx) for lexeme, text, ctx in _postings_of(first)}
    memory_create_many(tenant=tenant, subject_id="a", drafts=_session("Penguins everywhere."))

    first.refresh_from_db()
    after = {lexeme: (text, ctx) for lexeme, text, ctx in _postings_of(first)}
    # The first turn's derived context names its neighbour, so the neighbour's words are its
    # context terms; the rows it was threaded with were rewritten, and stay exact.
    assert before["lake"] == (0, 1)
    assert after["kayak"] == (1, 0)
    assert "lake" in after
    _assert_postings_match_documents()
    result = memory_recall(tenant=tenant, subject_id="a", query="penguins", mode="keyword")
    assert second.pk in {hit.memory.pk for hit in result.results}


def test_supersede_and_forget_keep_the_postings_exact(tenant):
    old, neighbour = memory_create_many(
        tenant=tenant, subject_id="a", drafts=_session("I live in Oslo.", "Oslo is rainy.")
    )
    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=_session("I live in Bergen.")[0]
    )
    _assert_postings_match_documents()

    memory_forget(tenant=tenant, subject_id="a", memory_id=new.pk)

    _assert_postings_match_documents()
    assert _postings_of(new) == []
    assert _postings_of(neighbour) != []


def test_erasure_removes_the_subjects_postings_only(tenant):
    memory_row(tenant, "a", "a secret about the garden")
    kept = memory_row(tenant, "b", "b keeps the garden")

    erase_subject(tenant=tenant, subject_id="a", requested_by="test")

    assert {row[0] for row in _assert_postings_match_documents()} == {str(kept.pk)}


def test_truncating_the_memories_truncates_the_postings(tenant):
    memory_row(tenant, "a", "tea in the garden")

    with connection.cursor() as cursor:
        # The test's transaction still holds the insert's deferred foreign-key checks.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("TRUNCATE memory_memory CASCADE")

    assert _rows(FROM_POSTINGS) == []


def test_updates_that_leave_the_document_alone_leave_the_postings_alone(tenant):
    memory = memory_row(tenant, "a", "tea in the garden")
    with connection.cursor() as cursor:
        cursor.execute("SELECT ctid FROM memory_search_term WHERE memory_id = %s", [memory.pk])
        before = cursor.fetchall()

    Memory.objects.filter(pk=memory.pk).update(recall_count=5, text="tea in the garden")

    with connection.cursor() as cursor:
        cursor.execute("SELECT ctid FROM memory_search_term WHERE memory_id = %s", [memory.pk])
        assert cursor.fetchall() == before
