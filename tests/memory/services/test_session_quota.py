"""The session quota: a subject's stored turns and their bytes, refused at the bound before
anything is written, exactly at the bound under concurrent writers, and one subject's turns
never count against another's."""

import pytest

from apps.memory.exceptions import QuotaExceeded, SessionQuotaExceeded
from apps.memory.models import Memory, SessionMemory
from apps.memory.selectors import SessionUsage, session_scope_usage
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_write_batch,
    session_append,
    session_append_many,
    session_clear,
)
from tests.concurrency import Race, race

WRITERS = 24


def _turn(content="turn", session="s1"):
    return SessionTurnDraft(session_id=session, content=content, ttl_seconds=3600)


def _stored(tenant, subject_id):
    return SessionMemory.objects.filter(tenant=tenant, subject_id=subject_id).count()


@pytest.mark.django_db
def test_the_turn_past_the_quota_is_refused_and_nothing_is_written(tenant, settings):
    settings.SESSION_QUOTA_TURNS = 3
    session_append_many(tenant=tenant, subject_id="a", drafts=[_turn(), _turn()])

    with pytest.raises(SessionQuotaExceeded) as refused:
        session_append_many(tenant=tenant, subject_id="a", drafts=[_turn(), _turn()])

    assert refused.value.code == "session_quota_exceeded"
    assert refused.value.details == {"bound": "turns", "quota": 3, "stored": 2, "requested": 2}
    assert _stored(tenant, "a") == 2
    session_append(tenant=tenant, subject_id="a", draft=_turn())  # the last one still fits
    assert _stored(tenant, "a") == 3


@pytest.mark.django_db
def test_bytes_are_bounded_by_content_and_metadata(tenant, settings):
    # Each turn of 8 content bytes and no metadata ("{}") stores 10 bytes.
    settings.SESSION_QUOTA_BYTES = 25
    session_append_many(tenant=tenant, subject_id="a", drafts=[_turn("12345678")] * 2)

    with pytest.raises(SessionQuotaExceeded) as refused:
        session_append(tenant=tenant, subject_id="a", draft=_turn("12345678"))

    assert refused.value.details == {"bound": "bytes", "quota": 25, "stored": 20, "requested": 10}
    session_append(tenant=tenant, subject_id="a", draft=_turn("123"))
    assert session_scope_usage(tenant=tenant, subject_id="a") == SessionUsage(turns=3, bytes=25)


@pytest.mark.django_db
def test_one_subjects_turns_do_not_count_against_another(tenant, other_tenant, settings):
    settings.SESSION_QUOTA_TURNS = 2
    session_append_many(tenant=tenant, subject_id="a", drafts=[_turn(), _turn()])

    session_append_many(tenant=tenant, subject_id="b", drafts=[_turn(), _turn()])
    session_append_many(tenant=other_tenant, subject_id="a", drafts=[_turn(), _turn()])

    assert (_stored(tenant, "b"), _stored(other_tenant, "a")) == (2, 2)


@pytest.mark.django_db
def test_clearing_a_session_makes_room(tenant, settings):
    settings.SESSION_QUOTA_TURNS = 2
    session_append_many(tenant=tenant, subject_id="a", drafts=[_turn(), _turn()])
    with pytest.raises(SessionQuotaExceeded):
        session_append(tenant=tenant, subject_id="a", draft=_turn(session="s2"))

    session_clear(tenant=tenant, subject_id="a", session_id="s1")
    session_append(tenant=tenant, subject_id="a", draft=_turn(session="s2"))

    assert _stored(tenant, "a") == 1


@pytest.mark.django_db
def test_a_mixed_batch_over_the_session_quota_writes_neither_tier(tenant, settings, mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    settings.SESSION_QUOTA_TURNS = 1

    with pytest.raises(SessionQuotaExceeded):
        memory_write_batch(
            tenant=tenant,
            subject_id="a",
            memories=[MemoryDraft(text="a fact")],
            turns=[_turn(), _turn()],
        )

    assert Memory.objects.filter(tenant=tenant).count() == 0
    assert _stored(tenant, "a") == 0


@pytest.mark.django_db
def test_a_mixed_batch_over_the_memory_quota_writes_no_turn(tenant, settings, mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")
    settings.MEMORY_QUOTA_LIVE_ROWS = 0

    with pytest.raises(QuotaExceeded):
        memory_write_batch(
            tenant=tenant, subject_id="a", memories=[MemoryDraft(text="a fact")], turns=[_turn()]
        )

    assert _stored(tenant, "a") == 0


def _race(write):
    return race(write, writers=WRITERS, refused_by=SessionQuotaExceeded)


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_stop_exactly_at_the_turn_quota(tenant, settings):
    settings.SESSION_QUOTA_TURNS = 10

    raced = _race(
        lambda index: session_append(
            tenant=tenant, subject_id="racer", draft=_turn(session=f"s{index % 3}")
        )
    )

    assert raced == Race(written=10, refused=WRITERS - 10)
    assert _stored(tenant, "racer") == 10
    assert session_scope_usage(tenant=tenant, subject_id="racer").turns == 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_stop_exactly_at_the_byte_quota(tenant, settings):
    # 100 content bytes + "{}" = 102 bytes a turn: seven fit in 720, the eighth does not.
    settings.SESSION_QUOTA_BYTES = 720

    raced = _race(
        lambda index: session_append(tenant=tenant, subject_id="racer", draft=_turn("x" * 100))
    )

    assert raced == Race(written=7, refused=WRITERS - 7)
    assert session_scope_usage(tenant=tenant, subject_id="racer") == SessionUsage(
        turns=7, bytes=714
    )


@pytest.mark.django_db(transaction=True)
def test_a_flooding_subject_leaves_the_quiet_one_its_quota(tenant, settings):
    settings.SESSION_QUOTA_TURNS = 5

    def write(index: int) -> None:
        subject = "quiet" if index % 6 == 0 else "noisy"
        session_append(tenant=tenant, subject_id=subject, draft=_turn())

    raced = _race(write)

    # 4 of the 24 writers are quiet; all of them fit. 20 noisy ones race for 5 places.
    assert raced == Race(written=4 + 5, refused=15)
    assert (_stored(tenant, "quiet"), _stored(tenant, "noisy")) == (4, 5)
