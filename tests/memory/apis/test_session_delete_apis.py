"""Clearing a session and deleting its turns: DELETE /memory/sessions/{id}[/turns/{seq|last}]."""

import pytest
from django.utils import timezone

from apps.memory.models import SessionMemory
from apps.memory.services import SessionTurnDraft, session_append_many
from apps.tenancy.models import IdempotencyRecord
from apps.tenancy.services import tenant_halt

SESSIONS = "/api/v1/memory/sessions"


def _append(tenant, subject_id, *contents, session="s1", ttl_seconds=3600):
    return session_append_many(
        tenant=tenant,
        subject_id=subject_id,
        drafts=[
            SessionTurnDraft(session_id=session, content=content, ttl_seconds=ttl_seconds)
            for content in contents
        ],
    )


def _contents(tenant, subject_id, session="s1"):
    return list(
        SessionMemory.objects.filter(tenant=tenant, subject_id=subject_id, session_id=session)
        .order_by("seq")
        .values_list("content", flat=True)
    )


def test_clear_deletes_only_the_callers_session(agent, tenant, other_tenant):
    _append(tenant, "agent-a", "one", "two")
    _append(tenant, "agent-a", "other session", session="s2")
    _append(tenant, "agent-b", "another subject's s1")
    _append(other_tenant, "agent-a", "another tenant's s1")

    response = agent.delete(f"{SESSIONS}/s1")

    assert response.status_code == 200
    assert response.json() == {"data": {"session_id": "s1", "deleted": 2}, "meta": {}}
    assert _contents(tenant, "agent-a") == []
    assert _contents(tenant, "agent-a", session="s2") == ["other session"]
    assert _contents(tenant, "agent-b") == ["another subject's s1"]
    assert _contents(other_tenant, "agent-a") == ["another tenant's s1"]


def test_clear_removes_expired_turns_held_for_promotion(agent, tenant):
    rows = _append(tenant, "agent-a", "held", "live")
    SessionMemory.objects.filter(pk=rows[0].pk).update(expires_at=timezone.now())

    response = agent.delete(f"{SESSIONS}/s1")

    assert response.json()["data"]["deleted"] == 2
    assert SessionMemory.objects.count() == 0


def test_clearing_an_unknown_session_deletes_nothing_and_is_not_an_error(agent, tenant):
    _append(tenant, "agent-b", "theirs")

    response = agent.delete(f"{SESSIONS}/s1")

    assert response.status_code == 200
    assert response.json()["data"] == {"session_id": "s1", "deleted": 0}
    assert SessionMemory.objects.count() == 1


def test_pop_deletes_and_returns_the_latest_live_turn(agent, tenant):
    rows = _append(tenant, "agent-a", "first", "second", "third")
    SessionMemory.objects.filter(pk=rows[2].pk).update(expires_at=timezone.now())

    popped = agent.delete(f"{SESSIONS}/s1/turns/last")
    history = agent.get(f"{SESSIONS}/s1").json()["data"]

    assert popped.status_code == 200
    assert (popped.json()["data"]["seq"], popped.json()["data"]["content"]) == (
        rows[1].seq,
        "second",
    )
    assert [turn["content"] for turn in history] == ["first"]
    assert _contents(tenant, "agent-a") == ["first", "third"]  # the expired one is not popped


def test_pop_on_an_empty_or_foreign_session_is_not_found(agent, tenant):
    _append(tenant, "agent-b", "theirs")

    mine = agent.delete(f"{SESSIONS}/s1/turns/last")

    assert mine.status_code == 404
    assert mine.json()["error"]["code"] == "not_found"
    assert _contents(tenant, "agent-b") == ["theirs"]


def test_delete_by_seq_removes_that_turn_only(agent, tenant):
    rows = _append(tenant, "agent-a", "first", "second", "third")

    response = agent.delete(f"{SESSIONS}/s1/turns/{rows[1].seq}")

    assert response.status_code == 200
    assert response.json()["data"]["content"] == "second"
    assert _contents(tenant, "agent-a") == ["first", "third"]


@pytest.mark.parametrize(
    ("_case", "owner", "session", "expired"),
    [
        ("another_subject", "agent-b", "s1", False),
        ("another_session", "agent-a", "s2", False),
        ("expired", "agent-a", "s1", True),
    ],
)
def test_delete_by_seq_of_a_turn_not_live_in_the_callers_session_is_not_found(
    agent, tenant, _case, owner, session, expired
):
    (row,) = _append(tenant, owner, "kept", session=session)
    if expired:
        SessionMemory.objects.filter(pk=row.pk).update(expires_at=timezone.now())

    response = agent.delete(f"{SESSIONS}/s1/turns/{row.seq}")

    assert response.status_code == 404
    assert SessionMemory.objects.filter(pk=row.pk).exists()


def test_a_foreign_tenants_turn_is_not_found(foreign_agent, tenant):
    (row,) = _append(tenant, "agent-a", "kept")

    by_seq = foreign_agent.delete(f"{SESSIONS}/s1/turns/{row.seq}")
    cleared = foreign_agent.delete(f"{SESSIONS}/s1")

    assert by_seq.status_code == 404
    assert cleared.json()["data"]["deleted"] == 0
    assert _contents(tenant, "agent-a") == ["kept"]


def test_an_over_long_session_id_is_refused(agent, tenant):
    response = agent.delete(f"{SESSIONS}/{'x' * 201}")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"


def test_a_retried_pop_with_the_same_key_pops_once(agent, tenant):
    _append(tenant, "agent-a", "first", "second")

    first = agent.delete(f"{SESSIONS}/s1/turns/last", HTTP_IDEMPOTENCY_KEY="pop-1")
    again = agent.delete(f"{SESSIONS}/s1/turns/last", HTTP_IDEMPOTENCY_KEY="pop-1")

    assert first.json() == again.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert _contents(tenant, "agent-a") == ["first"]
    assert IdempotencyRecord.objects.count() == 1


@pytest.mark.parametrize("path", ["/s1", "/s1/turns/last", "/s1/turns/1"])
def test_a_custody_halt_refuses_agent_deletes(agent, tenant, path):
    rows = _append(tenant, "agent-a", "kept")
    tenant_halt(tenant=tenant, reason="legal hold")
    if path.endswith("/1"):
        path = path.replace("/1", f"/{rows[0].seq}")

    response = agent.delete(f"{SESSIONS}{path}")

    assert response.status_code == 423
    assert _contents(tenant, "agent-a") == ["kept"]


def test_pops_walk_back_through_the_session_in_order(agent, tenant):
    _append(tenant, "agent-a", *[f"turn {n}" for n in range(4)])

    popped = [agent.delete(f"{SESSIONS}/s1/turns/last").json()["data"]["content"] for _ in range(4)]
    empty = agent.delete(f"{SESSIONS}/s1/turns/last")

    assert popped == ["turn 3", "turn 2", "turn 1", "turn 0"]
    assert empty.status_code == 404
