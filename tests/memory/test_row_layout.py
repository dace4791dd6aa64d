"""A memory's heap row: its search vector stays in it, so the keyword leg reads no TOAST, and a
recall bump rewrites it in place."""

import pytest
from django.db import connection

from apps.memory.recall_bump import bump_recall_counts
from apps.memory.services import MemoryDraft, memory_create_many, memory_embed_pending
from tests.memory.factories import memory_row

pytestmark = pytest.mark.django_db

# Turns of one session: each row carries its vector (1.5 KB) and a search vector over its
# own words and its neighbours' (derived context), well past Postgres' default 2 KB
# threshold for moving values out of the row.
TURNS = [
    f"Speaker {index % 2}: we talked about the {topic} plans for the weekend, the weather "
    f"forecast, the hiking trail near the lake and who brings the {topic} equipment this time"
    for index, topic in enumerate(
        ["camping", "kayak", "climbing", "cycling", "fishing", "sailing", "running", "skiing"]
    )
]


def _write_turns(tenant, subject_id):
    drafts = [
        MemoryDraft(text=text, metadata={"session": "1", "session_date": "2023-05-08"})
        for text in TURNS
    ]
    memories = memory_create_many(tenant=tenant, subject_id=subject_id, drafts=drafts)
    memory_embed_pending(memory_ids=[str(memory.pk) for memory in memories])


def _search_vectors_out_of_line(tenant, subject_id):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FILTER (WHERE embedding IS NULL), "
            "count(*) FILTER (WHERE pg_column_toast_chunk_id(search_vector) IS NOT NULL) "
            "FROM memory_memory WHERE tenant_id = %s AND subject_id = %s",
            [tenant.pk, subject_id],
        )
        unembedded, out_of_line = cursor.fetchone()
    assert unembedded == 0
    return out_of_line


def test_an_embedded_conversation_turn_keeps_its_search_vector_inline(tenant):
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = 'memory_memory'::regclass")
        (options,) = cursor.fetchone()
        # The same rows under Postgres' defaults (rolled back with the test): moved out.
        cursor.execute("ALTER TABLE memory_memory RESET (toast_tuple_target)")
        _write_turns(tenant, "defaults")
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred FK check may be pending
        restore = f"SET ({', '.join(options)})" if options else "RESET (toast_tuple_target)"
        cursor.execute(f"ALTER TABLE memory_memory {restore}")

    _write_turns(tenant, "a")

    assert _search_vectors_out_of_line(tenant, "defaults") == len(TURNS)
    assert _search_vectors_out_of_line(tenant, "a") == 0


def _updates_so_far():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_stat_get_xact_tuples_updated('memory_memory'::regclass), "
            "pg_stat_get_xact_tuples_hot_updated('memory_memory'::regclass)"
        )
        return cursor.fetchone()


def _one_memory_per_page(tenant):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT ON ((ctid::text::point)[0]) id FROM memory_memory "
            "WHERE tenant_id = %s ORDER BY (ctid::text::point)[0], id",
            [tenant.pk],
        )
        return [row[0] for row in cursor.fetchall()]


def test_a_recall_bump_rewrites_its_row_in_place(tenant):
    # Embedded rows (2-3 KB each, vector inline) written back to back fill pages. A bump
    # changes no indexed column, so where its page has room for the new version it touches no
    # index; one bumped row per page here, as bumps spread over a subject's pages.
    for index in range(24):
        memory_row(tenant, "a", f"note {index}: {TURNS[index % len(TURNS)]}")
    bumped = _one_memory_per_page(tenant)
    assert len(bumped) >= 6
    updated_before, in_place_before = _updates_so_far()

    assert bump_recall_counts(memory_ids=bumped) == len(bumped)

    updated, in_place = _updates_so_far()
    assert updated - updated_before == len(bumped)
    assert in_place - in_place_before == len(bumped)
