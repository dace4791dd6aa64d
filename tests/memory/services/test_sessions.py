import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.memory.exceptions import SessionTurnNotFound
from apps.memory.models import SessionMemory, SessionPromotion
from apps.memory.selectors import session_history
from apps.memory.services import (
    SessionTurnDraft,
    session_append,
    session_append_many,
    session_clear,
    session_prune_expired,
    session_turn_delete,
)


def _turn(content, session="s1", **kwargs):
    kwargs.setdefault("ttl_seconds", 3600)
    return SessionTurnDraft(session_id=session, content=content, **kwargs)


def test_turns_read_back_in_append_order_even_within_one_batch(tenant):
    session_append_many(tenant=tenant, subject_id="a", drafts=[_turn(f"t{i}") for i in range(50)])
    session_append(tenant=tenant, subject_id="a", draft=_turn("last", role="assistant"))

    page = session_history(tenant=tenant, subject_id="a", session_id="s1", limit=100)

    assert [turn.content for turn in page.results] == [f"t{i}" for i in range(50)] + ["last"]
    assert page.total_count == 51


def test_same_microsecond_appends_have_a_total_order(tenant):
    rows = session_append_many(
        tenant=tenant, subject_id="a", drafts=[_turn("x"), _turn("y"), _turn("z")]
    )

    seqs = [row.seq for row in rows]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 3


def test_history_is_scoped_to_the_callers_subject_and_session(tenant, other_tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn("mine"))
    session_append(tenant=tenant, subject_id="b", draft=_turn("other subject"))
    session_append(tenant=other_tenant, subject_id="a", draft=_turn("other tenant"))
    session_append(tenant=tenant, subject_id="a", draft=_turn("other session", session="s2"))

    page = session_history(tenant=tenant, subject_id="a", session_id="s1")

    assert [turn.content for turn in page.results] == ["mine"]


def test_expiry_is_required(tenant):
    with pytest.raises(ValidationFailed) as excinfo:
        session_append(
            tenant=tenant, subject_id="a", draft=SessionTurnDraft(session_id="s", content="x")
        )

    assert excinfo.value.code == "expires_at_required"
    assert SessionMemory.objects.count() == 0


def test_content_over_100_kb_is_refused(tenant):
    with pytest.raises(ValidationFailed) as excinfo:
        session_append(tenant=tenant, subject_id="a", draft=_turn("é" * 51_201))

    assert excinfo.value.code == "content_too_large"
    assert SessionMemory.objects.count() == 0


def test_content_of_exactly_100_kb_is_accepted(tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn("x" * 102_400))

    assert SessionMemory.objects.count() == 1


def test_expires_at_in_the_past_is_refused(tenant):
    past = timezone.now() - timedelta(seconds=1)

    with pytest.raises(ValidationFailed) as excinfo:
        session_append(
            tenant=tenant,
            subject_id="a",
            draft=SessionTurnDraft(session_id="s", content="x", expires_at=past),
        )

    assert excinfo.value.code == "invalid_expires_at"


def test_prune_deletes_only_expired_turns(tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn("short", ttl_seconds=60))
    session_append(tenant=tenant, subject_id="a", draft=_turn("long", ttl_seconds=7200))
    SessionPromotion.objects.create(
        tenant=tenant, subject_id="a", session_id="s1", content_hash="0" * 64
    )

    report = session_prune_expired(now=timezone.now() + timedelta(seconds=120))

    assert (report.deleted, report.held, report.total) == ({"promoted": 1}, 0, 1)
    assert list(SessionMemory.objects.values_list("content", flat=True)) == ["long"]


def test_a_never_promoted_session_keeps_its_expired_turns_for_the_sweep(tenant, settings):
    settings.SESSION_PROMOTION_HOLD_MAX_SECONDS = 3600
    session_append_many(
        tenant=tenant,
        subject_id="a",
        drafts=[_turn("I adopted a puppy", ttl_seconds=60), _turn("Nice", ttl_seconds=60)],
    )
    later = timezone.now() + timedelta(seconds=120)

    held = session_prune_expired(now=later)

    assert (held.deleted, held.held) == ({}, 2)
    assert SessionMemory.objects.count() == 2
    # Promotion (the sweep) processes the session: the watermark releases its turns.
    SessionPromotion.objects.create(
        tenant=tenant, subject_id="a", session_id="s1", content_hash="0" * 64
    )
    released = session_prune_expired(now=later)
    assert (released.deleted, released.held) == ({"promoted": 2}, 0)
    assert SessionMemory.objects.count() == 0


def test_a_turn_written_after_the_watermark_is_still_held(tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn("old", ttl_seconds=60))
    SessionPromotion.objects.create(
        tenant=tenant, subject_id="a", session_id="s1", content_hash="0" * 64
    )
    SessionPromotion.objects.update(updated_at=timezone.now() - timedelta(seconds=30))
    session_append_many(
        tenant=tenant,
        subject_id="a",
        drafts=[_turn("new", ttl_seconds=60), _turn("newer", ttl_seconds=60)],
    )
    SessionMemory.objects.filter(content="old").update(
        created_at=timezone.now() - timedelta(seconds=60)
    )

    report = session_prune_expired(now=timezone.now() + timedelta(seconds=120))

    assert (report.deleted, report.held) == ({"promoted": 1}, 2)
    assert list(SessionMemory.objects.order_by("seq").values_list("content", flat=True)) == [
        "new",
        "newer",
    ]


def test_the_hold_has_a_ceiling_and_single_turns_and_reserved_subjects_are_not_held(
    tenant, settings
):
    settings.SESSION_PROMOTION_HOLD_MAX_SECONDS = 600
    session_append_many(
        tenant=tenant,
        subject_id="a",
        drafts=[_turn("x", session="two"), _turn("y", session="two"), _turn("z", session="one")],
    )
    session_append_many(
        tenant=tenant,
        subject_id="engram:promotion-eval",
        drafts=[_turn("p", session="r"), _turn("q", session="r")],
    )
    SessionMemory.objects.update(expires_at=timezone.now() - timedelta(seconds=60))

    early = session_prune_expired()

    assert (early.deleted, early.held) == ({"reserved": 2, "single_turn": 1}, 2)
    ceiling = session_prune_expired(now=timezone.now() + timedelta(seconds=700))
    assert (ceiling.deleted, ceiling.held) == ({"hold_ceiling": 2}, 0)
    assert SessionMemory.objects.count() == 0


def test_the_prune_task_reports_what_it_deleted_and_why(tenant, mocker):
    emit = mocker.patch("apps.core.telemetry.emit")
    session_append(tenant=tenant, subject_id="a", draft=_turn("alone", ttl_seconds=60))
    SessionMemory.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    from apps.memory.tasks import prune_expired_sessions_task

    prune_expired_sessions_task()

    emit.assert_called_once_with(
        "memory_session.pruned",
        {"deleted": 1, "held": 0},
        {"deleted_by_reason": {"single_turn": 1}},
    )


def test_expired_turns_are_not_read_before_the_prune_runs(tenant):
    row = session_append(tenant=tenant, subject_id="a", draft=_turn("stale", ttl_seconds=60))
    SessionMemory.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    page = session_history(tenant=tenant, subject_id="a", session_id="s1")

    assert page.results == []


@pytest.mark.django_db(transaction=True)
def test_a_pop_beside_another_in_flight_pop_takes_the_turn_before(tenant):
    rows = session_append_many(
        tenant=tenant, subject_id="a", drafts=[_turn("t0"), _turn("t1"), _turn("t2")]
    )
    popped: list[str] = []

    def pop() -> None:
        try:
            popped.append(
                session_turn_delete(tenant=tenant, subject_id="a", session_id="s1").content
            )
        finally:
            connection.close()  # the thread had its own connection

    # This connection holds the last turn as an in-flight pop would, until the block ends.
    with transaction.atomic():
        SessionMemory.objects.select_for_update().get(pk=rows[2].pk)
        worker = threading.Thread(target=pop)
        worker.start()
        worker.join(timeout=30)
        finished_while_locked = not worker.is_alive()
    worker.join()

    assert finished_while_locked
    assert popped == ["t1"]
    assert [turn.content for turn in SessionMemory.objects.order_by("seq")] == ["t0", "t2"]


def test_clear_and_turn_delete_keep_to_the_callers_scope(tenant, other_tenant):
    session_append(tenant=tenant, subject_id="a", draft=_turn("mine"))
    theirs = session_append(tenant=tenant, subject_id="b", draft=_turn("other subject"))
    session_append(tenant=other_tenant, subject_id="a", draft=_turn("other tenant"))

    deleted = session_clear(tenant=tenant, subject_id="a", session_id="s1")
    with pytest.raises(SessionTurnNotFound):
        session_turn_delete(tenant=tenant, subject_id="a", session_id="s1", seq=theirs.seq)

    assert deleted == 1
    assert sorted(SessionMemory.objects.values_list("content", flat=True)) == [
        "other subject",
        "other tenant",
    ]
