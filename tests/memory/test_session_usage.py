"""Each subject's stored session turns and bytes (``session_scope_usage``, migration 0026)
always equal what its turns add up to, whichever path appends, prunes, clears or erases them;
and the service's count of a turn about to be written is the one the trigger stores."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.dataops.services import erase_subject, erase_tenant
from apps.memory.models import SessionMemory
from apps.memory.selectors import SessionUsage, session_scope_usage
from apps.memory.services import (
    SessionTurnDraft,
    session_append_many,
    session_clear,
    session_prune_expired,
    session_turn_bytes,
    session_turn_delete,
)
from tests.memory.factories import SessionTurnFactory

pytestmark = pytest.mark.django_db

FROM_TURNS = """
    SELECT tenant_id, subject_id, count(*),
           sum(octet_length(content) + octet_length(metadata::text))
      FROM memory_sessionmemory GROUP BY tenant_id, subject_id
"""
FROM_USAGE = "SELECT tenant_id, subject_id, turns, bytes FROM session_scope_usage"


def _rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _assert_usage_matches_turns():
    expected = _rows(FROM_TURNS)
    assert _rows(FROM_USAGE) == expected
    return expected


def _turns(*contents, session="s1", **fields):
    return [
        SessionTurnDraft(session_id=session, content=content, ttl_seconds=3600, **fields)
        for content in contents
    ]


@pytest.mark.parametrize(
    ("_case", "metadata"),
    [
        ("empty", {}),
        ("nested", {"tool": "search", "args": {"q": "ünïcode ✓", "n": [1, 2.5, None, True]}}),
        ("escapes", {"line": 'a "quoted"\nnew\tline \\ slash / \u0001'}),
        ("keys out of order", {"zz": 1, "a": {"c": [], "b": {}}, "m": -3}),
    ],
)
def test_the_service_counts_a_turn_as_the_trigger_stores_it(tenant, _case, metadata):
    content = "héllo wörld ✓"

    session_append_many(tenant=tenant, subject_id="a", drafts=_turns(content, metadata=metadata))

    assert session_scope_usage(tenant=tenant, subject_id="a") == SessionUsage(
        turns=1, bytes=session_turn_bytes(content=content, metadata=metadata)
    )


def test_every_path_keeps_the_counts(tenant, other_tenant):
    session_append_many(tenant=tenant, subject_id="a", drafts=_turns("one", "two", "three"))
    session_append_many(tenant=tenant, subject_id="a", drafts=_turns("elsewhere", session="s2"))
    session_append_many(tenant=tenant, subject_id="b", drafts=_turns("four", metadata={"k": 1}))
    session_append_many(tenant=other_tenant, subject_id="a", drafts=_turns("five"))
    SessionMemory.objects.bulk_create(
        SessionTurnFactory.build(tenant=tenant, subject_id="c", content="x" * n) for n in (1, 10)
    )
    assert _assert_usage_matches_turns() == sorted(
        [
            (str(tenant.pk), "a", "4", str(len("onetwothreeelsewhere") + 4 * 2)),
            (str(tenant.pk), "b", "1", str(len("four") + len('{"k": 1}'))),
            (str(tenant.pk), "c", "2", str(11 + 2 * 2)),
            (str(other_tenant.pk), "a", "1", str(len("five") + 2)),
        ]
    )

    session_turn_delete(tenant=tenant, subject_id="a", session_id="s1")  # pops "three"
    session_clear(tenant=tenant, subject_id="a", session_id="s2")
    SessionMemory.objects.filter(tenant=tenant, subject_id="b").update(content="four, edited")
    SessionMemory.objects.filter(tenant=tenant, subject_id="c", content="x").update(subject_id="b")
    _assert_usage_matches_turns()
    assert session_scope_usage(tenant=tenant, subject_id="a") == SessionUsage(
        turns=2, bytes=len("onetwo") + 4
    )

    SessionMemory.objects.filter(tenant=tenant, subject_id="a").update(
        expires_at=timezone.now(), created_at=timezone.now()
    )
    report = session_prune_expired(now=timezone.now())
    assert report.total == 0  # held for promotion: still stored, still counted
    assert session_scope_usage(tenant=tenant, subject_id="a").turns == 2

    erase_subject(tenant=tenant, subject_id="b", requested_by="test")
    _assert_usage_matches_turns()
    erase_tenant(tenant=tenant, requested_by="test")
    assert _assert_usage_matches_turns() == [(str(other_tenant.pk), "a", "1", str(4 + 2))]
    assert session_scope_usage(tenant=tenant, subject_id="a") == SessionUsage(turns=0, bytes=0)


def test_pruned_turns_stop_counting(tenant, settings):
    long_ago = timezone.now() - timedelta(seconds=settings.SESSION_PROMOTION_HOLD_MAX_SECONDS + 60)
    SessionTurnFactory.create_batch(3, tenant=tenant, subject_id="a", expires_at=long_ago)
    SessionTurnFactory.create(tenant=tenant, subject_id="a", content="kept")
    assert session_scope_usage(tenant=tenant, subject_id="a").turns == 4

    report = session_prune_expired(now=timezone.now())

    assert report.deleted == {"hold_ceiling": 3}
    assert session_scope_usage(tenant=tenant, subject_id="a") == SessionUsage(
        turns=1, bytes=len("kept") + 2
    )
    _assert_usage_matches_turns()


def test_truncation_clears_the_counts(tenant):
    session_append_many(tenant=tenant, subject_id="a", drafts=_turns("one"))

    with connection.cursor() as cursor:
        # The test's transaction still holds the insert's deferred foreign-key checks.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("TRUNCATE memory_sessionmemory")

    assert _rows(FROM_USAGE) == []
