"""Appending a turn: POST /memory/sessions/{id}/turns, and the deprecated POST /memory form it
replaces (same fields, codes, limits and body)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from apps.memory.models import SessionMemory
from apps.tenancy.models import ApiKeyRole, IdempotencyRecord
from apps.tenancy.services import tenant_halt

MEMORY = "/api/v1/memory"
SESSIONS = "/api/v1/memory/sessions"


def _turns(session_id):
    return f"{SESSIONS}/{session_id}/turns"


def _contents(tenant, subject_id, session="s1"):
    return list(
        SessionMemory.objects.filter(tenant=tenant, subject_id=subject_id, session_id=session)
        .order_by("seq")
        .values_list("content", flat=True)
    )


def _comparable(body):
    """A write's body without the values that differ between two writes."""
    data = {
        key: value
        for key, value in body["data"].items()
        if key not in {"seq", "expires_at", "occurred_at", "created_at"}
    }
    return {"data": data, "meta": body["meta"]}


def test_appended_turns_read_back_in_order(agent, tenant):
    for content in ("first", "second", "third"):
        response = agent.post(_turns("s1"), {"content": content, "ttl_seconds": 60})
        assert response.status_code == 201

    history = agent.get(f"{SESSIONS}/s1").json()

    assert [turn["content"] for turn in history["data"]] == ["first", "second", "third"]
    assert history["meta"]["total_count"] == 3
    assert _contents(tenant, "agent-a") == ["first", "second", "third"]


def test_the_body_is_the_deprecated_forms_body(agent):
    fields = {"content": "hello", "role": "assistant", "metadata": {"k": 1}, "ttl_seconds": 60}

    new = agent.post(_turns("s1"), fields)
    old = agent.post(MEMORY, {"tier": "session", "session_id": "s1", **fields})

    assert (new.status_code, old.status_code) == (201, 201)
    assert set(new.json()["data"]) == set(old.json()["data"])
    assert _comparable(new.json()) == _comparable(old.json())
    assert new.json()["data"]["tier"] == "session"
    assert new.json()["data"]["seq"] < old.json()["data"]["seq"]


def test_every_turn_field_is_stored(agent, tenant):
    occurred = "2024-05-08T10:00:00+00:00"
    expires = timezone.now() + timedelta(hours=1)

    response = agent.post(
        _turns("s1"),
        {
            "content": "said earlier",
            "role": "system",
            "metadata": {"recalled_context": True},
            "occurred_at": occurred,
            "expires_at": expires.isoformat(),
        },
    )

    turn = SessionMemory.objects.get(pk=response.json()["data"]["seq"])
    assert (turn.role, turn.metadata) == ("system", {"recalled_context": True})
    assert turn.occurred_at.isoformat() == occurred
    assert turn.expires_at == expires
    assert turn.role == response.json()["data"]["role"]


def test_the_session_is_the_urls_and_a_body_session_id_is_ignored(agent, tenant):
    response = agent.post(
        _turns("s1"),
        {
            "content": "where?",
            "ttl_seconds": 60,
            "session_id": "s2",
            "tier": "long_term",
            "subject_id": "evil",
            "tenant_id": "x",
        },
    )

    assert response.status_code == 201
    assert response.json()["data"]["session_id"] == "s1"
    assert _contents(tenant, "agent-a") == ["where?"]
    assert _contents(tenant, "agent-a", session="s2") == []
    assert not SessionMemory.objects.filter(subject_id="evil").exists()


def test_another_subjects_or_tenants_session_of_the_same_id_is_never_touched(
    agent, other_agent, foreign_agent, tenant, other_tenant
):
    other_agent.post(_turns("s1"), {"content": "theirs", "ttl_seconds": 60})
    foreign_agent.post(_turns("s1"), {"content": "foreign", "ttl_seconds": 60})

    agent.post(_turns("s1"), {"content": "mine", "ttl_seconds": 60})

    assert _contents(tenant, "agent-a") == ["mine"]
    assert _contents(tenant, "agent-b") == ["theirs"]
    assert _contents(other_tenant, "agent-a") == ["foreign"]
    assert [t["content"] for t in other_agent.get(f"{SESSIONS}/s1").json()["data"]] == ["theirs"]


#: Bad turn fields, each with the code both forms answer.
BAD_TURNS = [
    ("missing_content", {"ttl_seconds": 60}, "validation_error"),
    ("blank_content", {"content": "", "ttl_seconds": 60}, "validation_error"),
    ("null_content", {"content": None, "ttl_seconds": 60}, "validation_error"),
    ("numeric_content", {"content": {"a": 1}, "ttl_seconds": 60}, "validation_error"),
    ("no_expiry", {"content": "c"}, "expires_at_required"),
    ("zero_ttl", {"content": "c", "ttl_seconds": 0}, "validation_error"),
    ("ttl_over_max", {"content": "c", "ttl_seconds": 10**9}, "validation_error"),
    ("ttl_not_int", {"content": "c", "ttl_seconds": "soon"}, "validation_error"),
    ("bad_role", {"content": "c", "ttl_seconds": 60, "role": "robot"}, "validation_error"),
    (
        "bad_occurred_at",
        {"content": "c", "ttl_seconds": 60, "occurred_at": "x"},
        "validation_error",
    ),
    (
        "expires_in_the_past",
        {"content": "c", "expires_at": "2000-01-01T00:00:00Z"},
        "invalid_expires_at",
    ),
    (
        "metadata_not_object",
        {"content": "c", "ttl_seconds": 60, "metadata": [1]},
        "validation_error",
    ),
    (
        "metadata_too_large",
        {"content": "c", "ttl_seconds": 60, "metadata": {"k": "x" * 20_000}},
        "metadata_too_large",
    ),
    ("content_too_large", {"content": "x" * 102_401, "ttl_seconds": 60}, "content_too_large"),
    ("nul_in_content", {"content": "a\x00b", "ttl_seconds": 60}, "invalid_text"),
]


@pytest.mark.parametrize(("_case", "body", "code"), BAD_TURNS)
def test_bad_turns_get_the_deprecated_forms_codes_and_write_nothing(agent, _case, body, code):
    new = agent.post(_turns("s1"), body)
    old = agent.post(MEMORY, {"tier": "session", "session_id": "s1", **body})

    assert (new.status_code, new.json()["error"]["code"]) == (422, code)
    assert (old.status_code, old.json()["error"]["code"]) == (422, code)
    assert SessionMemory.objects.count() == 0


@pytest.mark.parametrize(("_case", "session_id"), [("blank", "%20%20"), ("too_long", "s" * 201)])
def test_a_bad_session_id_in_the_url_is_invalid_session_id(agent, _case, session_id):
    response = agent.post(_turns(session_id), {"content": "c", "ttl_seconds": 60})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_session_id"
    assert SessionMemory.objects.count() == 0


@pytest.mark.parametrize(("_case", "body"), [("list", [1, 2]), ("string", "turn")])
def test_a_body_that_is_not_an_object_is_422(agent, _case, body):
    response = agent.post(_turns("s1"), body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


def test_an_idempotency_key_replays_the_first_append(agent, tenant):
    body = {"content": "once", "ttl_seconds": 60}

    first = agent.post(_turns("s1"), body, HTTP_IDEMPOTENCY_KEY="turn-1")
    again = agent.post(_turns("s1"), body, HTTP_IDEMPOTENCY_KEY="turn-1")
    reused = agent.post(
        _turns("s1"), {"content": "twice", "ttl_seconds": 60}, HTTP_IDEMPOTENCY_KEY="turn-1"
    )

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert (first["Idempotent-Replayed"], again["Idempotent-Replayed"]) == ("false", "true")
    assert (reused.status_code, reused.json()["error"]["code"]) == (422, "idempotency_key_reused")
    assert _contents(tenant, "agent-a") == ["once"]
    assert IdempotencyRecord.objects.get().status_code == 201


def test_appends_share_the_write_rate_with_every_other_write(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 2
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400
    assert agent.post(MEMORY, {"text": "one"}).status_code == 201
    assert agent.post(_turns("s1"), {"content": "two", "ttl_seconds": 60}).status_code == 201

    response = agent.post(_turns("s1"), {"content": "three", "ttl_seconds": 60})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 86_401
    assert SessionMemory.objects.count() == 1


def test_an_append_past_the_session_quota_is_409_and_writes_nothing(
    agent, other_agent, foreign_agent, tenant, settings
):
    settings.SESSION_QUOTA_TURNS = 1
    assert agent.post(_turns("s1"), {"content": "one", "ttl_seconds": 60}).status_code == 201

    refused = agent.post(_turns("s2"), {"content": "two", "ttl_seconds": 60})
    deprecated = agent.post(
        MEMORY, {"tier": "session", "session_id": "s2", "content": "two", "ttl_seconds": 60}
    )

    assert refused.status_code == deprecated.status_code == 409
    assert refused.json()["error"]["code"] == deprecated.json()["error"]["code"]
    assert refused.json()["error"]["code"] == "session_quota_exceeded"
    assert refused.json()["error"]["details"] == {
        "bound": "turns",
        "quota": 1,
        "stored": 1,
        "requested": 1,
    }
    assert _contents(tenant, "agent-a", session="s2") == []
    # Another agent of the tenant, and the same agent id in another tenant, are unaffected.
    for caller in (other_agent, foreign_agent):
        assert caller.post(_turns("s1"), {"content": "c", "ttl_seconds": 60}).status_code == 201


def test_a_custody_halt_freezes_agent_appends(agent, tenant):
    tenant_halt(tenant=tenant, reason="investigation")

    response = agent.post(_turns("s1"), {"content": "c", "ttl_seconds": 60})

    assert response.status_code == 423
    assert response.json()["error"]["code"] == "tenant_halted"
    assert SessionMemory.objects.count() == 0


def test_an_append_requires_a_key(anonymous, db):
    response = anonymous.post(_turns("s1"), {"content": "c", "ttl_seconds": 60}, format="json")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize("role", [ApiKeyRole.AGENT, ApiKeyRole.USER, ApiKeyRole.ORCHESTRATOR])
def test_every_tenant_role_may_append(make_caller, tenant, role):
    caller = make_caller(tenant, role, agent_id="x" if role == ApiKeyRole.AGENT else "")

    response = caller.post(_turns("s1"), {"content": "c", "ttl_seconds": 60})

    assert response.status_code == 201


def test_the_deprecated_form_still_appends(agent, tenant):
    response = agent.post(
        MEMORY, {"tier": "session", "session_id": "s1", "content": "old way", "ttl_seconds": 60}
    )

    assert response.status_code == 201
    assert response.json()["data"]["tier"] == "session"
    assert _contents(tenant, "agent-a") == ["old way"]


def test_the_schema_documents_the_route_and_deprecates_only_the_session_form():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    append = schema["paths"]["/api/v1/memory/sessions/{session_id}/turns"]["post"]
    write = schema["paths"]["/api/v1/memory"]["post"]
    write_input = schema["components"]["schemas"]["MemoryWriteInputRequest"]["properties"]

    assert append["operationId"] == "memory_session_turn_append"
    assert set(append["responses"]) == {
        "201", "400", "401", "403", "404", "409", "413", "414", "415", "422", "423", "429"
    }  # fmt: skip
    assert "Idempotency-Key" in {parameter["name"] for parameter in append["parameters"]}
    assert "deprecated" not in append
    # Long-term writes use POST /memory too: only its tier=session variant is deprecated.
    assert "deprecated" not in write
    assert "**deprecated**" in write["description"]
    assert "Deprecated" in write_input["session_id"]["description"]
