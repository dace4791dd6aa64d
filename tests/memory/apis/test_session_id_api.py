"""Session ids in URLs: any printable id names one session on every session endpoint, and an
id no session may have is 422 ``invalid_session_id`` on each of them."""

from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

from apps.memory.models import SessionMemory
from apps.memory.services import SessionTurnDraft, session_append_many

SESSIONS = "/api/v1/memory/sessions"
MEMORY = "/api/v1/memory"


def _append(tenant, session_id, *contents):
    session_append_many(
        tenant=tenant,
        subject_id="agent-a",
        drafts=[
            SessionTurnDraft(session_id=session_id, content=content, ttl_seconds=3600)
            for content in contents
        ],
    )


def _contents(session_id):
    return list(
        SessionMemory.objects.filter(subject_id="agent-a", session_id=session_id)
        .order_by("seq")
        .values_list("content", flat=True)
    )


# The id, its segment on the wire, and a session whose URL the unescaped id would reach.
ESCAPED_IDS = [
    ("slash", "team/a", "team%252Fa", "team"),
    ("route_suffix", "x/turns/last", "x%252Fturns%252Flast", "x"),
    ("dot", ".", "%252E", "x"),
    ("dot_dot", "..", "%252E%252E", "x"),
    ("percent", "50%", "50%2525", "50"),
    ("percent_escape", "a%2Fb", "a%25252Fb", "a"),
    # Ids without `%` or `/` read the same encoded once, as clients before the escape sent.
    ("space_encoded_once", "s 1", "s%201", "s"),
    ("unicode_encoded_once", "ünï 💬", "%C3%BCn%C3%AF%20%F0%9F%92%AC", "x"),
]


@pytest.mark.parametrize(("_case", "session_id", "segment", "neighbour"), ESCAPED_IDS)
def test_an_escaped_id_names_one_session_on_every_endpoint(
    agent, tenant, _case, session_id, segment, neighbour
):
    _append(tenant, neighbour, "the neighbour's")

    appended = [
        agent.post(f"{SESSIONS}/{segment}/turns", {"content": text, "ttl_seconds": 60})
        for text in ["one", "two", "three"]
    ]
    history = agent.get(f"{SESSIONS}/{segment}")
    popped = agent.delete(f"{SESSIONS}/{segment}/turns/last")
    first_seq = history.json()["data"][0]["seq"]
    deleted = agent.delete(f"{SESSIONS}/{segment}/turns/{first_seq}")
    after = _contents(session_id)
    cleared = agent.delete(f"{SESSIONS}/{segment}")

    assert [response.status_code for response in appended] == [201, 201, 201]
    assert {response.json()["data"]["session_id"] for response in appended} == {session_id}
    assert [turn["content"] for turn in history.json()["data"]] == ["one", "two", "three"]
    assert (popped.status_code, popped.json()["data"]["content"]) == (200, "three")
    assert (deleted.status_code, deleted.json()["data"]["content"]) == (200, "one")
    assert after == ["two"]
    assert cleared.json()["data"] == {"session_id": session_id, "deleted": 1}
    assert _contents(session_id) == []
    assert _contents(neighbour) == ["the neighbour's"]


REFUSED_SEGMENTS = [
    ("empty", ""),
    ("blank", "%20%20"),
    ("too_long", "s" * 201),
    ("tab", "a%09b"),
    ("newline", "a%0Ab"),
    ("escaped_nul", "a%2500b"),
    ("escaped_undecodable_byte", "a%25FFb"),
]
ENDPOINTS = [
    ("append", "post", "{}/turns"),
    ("history", "get", "{}"),
    ("clear", "delete", "{}"),
    ("pop", "delete", "{}/turns/last"),
    ("delete_turn", "delete", "{}/turns/1"),
]


@pytest.mark.parametrize(("_endpoint", "method", "template"), ENDPOINTS)
@pytest.mark.parametrize(("_case", "segment"), REFUSED_SEGMENTS)
def test_every_session_endpoint_refuses_an_id_no_session_may_have(
    agent, tenant, _endpoint, method, template, _case, segment
):
    _append(tenant, "a", "kept")
    path = f"{SESSIONS}/{template.format(segment)}"

    if method == "post":
        response = agent.post(path, {"content": "c", "ttl_seconds": 60})
    else:
        response = getattr(agent, method)(path)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"
    assert list(SessionMemory.objects.values_list("session_id", "content")) == [("a", "kept")]


def test_a_batch_keeps_a_session_id_exactly_as_given(agent):
    response = agent.post(
        f"{MEMORY}/batch",
        {"items": [{"tier": "session", "session_id": " s ", "content": "c", "ttl_seconds": 60}]},
    )
    history = agent.get(f"{SESSIONS}/%20s%20")

    assert response.status_code == 201
    assert response.json()["data"][0]["session_id"] == " s "
    assert [turn["content"] for turn in history.json()["data"]] == ["c"]


def test_a_batch_refuses_a_control_character_in_a_session_id(agent):
    response = agent.post(
        f"{MEMORY}/batch",
        {
            "items": [
                {"tier": "session", "session_id": "ok", "content": "c", "ttl_seconds": 60},
                {"tier": "session", "session_id": "a\tb", "content": "c", "ttl_seconds": 60},
            ]
        },
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"
    assert response.json()["error"]["details"] == {"index": 1}
    assert SessionMemory.objects.count() == 0


@pytest.mark.parametrize("session_id", ["team/a", ".", "..", "50%", "a%41", " s ", "ünï"])
def test_reverse_and_the_route_agree_on_every_id(session_id):
    path = reverse("memory-session-turn-last", kwargs={"session_id": session_id})

    # The test client, like a WSGI server, percent-decodes the path once before routing.
    assert resolve(unquote(path)).kwargs == {"session_id": session_id}


@pytest.mark.parametrize(("_case", "session_id"), [("too_long", "s" * 201), ("blank", "  ")])
def test_a_batch_refuses_an_id_no_session_may_have_as_the_session_endpoints_do(
    agent, _case, session_id
):
    response = agent.post(
        f"{MEMORY}/batch",
        {
            "items": [
                {"tier": "session", "session_id": "ok", "content": "c", "ttl_seconds": 60},
                {"tier": "session", "session_id": session_id, "content": "c", "ttl_seconds": 60},
            ]
        },
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"
    assert response.json()["error"]["details"] == {"index": 1}
    assert SessionMemory.objects.count() == 0
