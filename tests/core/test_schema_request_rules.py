"""Request schemas refuse what the server refuses, where OpenAPI can say it: a body the schema
accepts is not refused for a rule the schema could have stated."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tests.core.test_schema_response_types import _json_schema, schema  # noqa: F401 - fixture

TURNS = "/api/v1/memory/sessions/s1/turns"


def _request_validator(openapi: dict[str, Any], operation_id: str) -> jsonschema.Validator:
    operation = next(
        operation
        for operations in openapi["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict) and operation.get("operationId") == operation_id
    )
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    document = {"allOf": [body], "components": _json_schema(openapi["components"])}
    return jsonschema.Draft7Validator(document)


def _header_schema(openapi: dict[str, Any], operation_id: str, name: str) -> dict[str, Any]:
    for operations in openapi["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return next(p["schema"] for p in operation["parameters"] if p["name"] == name)
    raise AssertionError(operation_id)


@pytest.mark.parametrize(
    ("_case", "body", "valid"),
    [
        ("no_expiry", {"content": "hello"}, False),
        ("ttl", {"content": "hello", "ttl_seconds": 60}, True),
        ("expires_at", {"content": "hello", "expires_at": "2099-01-01T00:00:00Z"}, True),
        ("blank_content", {"content": "", "ttl_seconds": 60}, False),
    ],
)
def test_the_turn_schema_requires_an_expiry(schema, _case, body, valid):  # noqa: F811
    assert _request_validator(schema, "memory_session_turn_append").is_valid(body) is valid


@pytest.mark.django_db
def test_a_turn_the_schema_refuses_the_server_refuses(schema, agent):  # noqa: F811
    body = {"content": "hello"}

    response = agent.post(TURNS, body)

    assert _request_validator(schema, "memory_session_turn_append").is_valid(body) is False
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "expires_at_required"


@pytest.mark.parametrize(
    ("_case", "body", "valid"),
    [
        ("long_term", {"text": "Deploys happen on Thursdays."}, True),
        ("long_term_tier", {"tier": "long_term", "text": "A fact."}, True),
        ("blank_text", {"text": "   "}, False),
        ("no_text", {"tags": ["a"]}, False),
        ("turn", {"tier": "session", "session_id": "s", "content": "hi", "ttl_seconds": 9}, True),
        ("turn_without_expiry", {"tier": "session", "session_id": "s", "content": "hi"}, False),
        ("turn_without_session", {"tier": "session", "content": "hi", "ttl_seconds": 9}, False),
        ("blank_tag", {"text": "A fact.", "tags": [""]}, False),
    ],
)
def test_the_write_schema_states_each_tiers_rules(schema, _case, body, valid):  # noqa: F811
    assert _request_validator(schema, "memory_write").is_valid(body) is valid


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("_case", "body"),
    [
        ("blank_text", {"text": "   "}),
        ("turn_without_expiry", {"tier": "session", "session_id": "s", "content": "hi"}),
        ("blank_tag", {"text": "A fact.", "tags": [""]}),
    ],
)
def test_a_write_the_schema_refuses_the_server_refuses(schema, agent, _case, body):  # noqa: F811
    assert agent.post("/api/v1/memory", body).status_code == 422


def test_an_empty_batch_and_a_blank_query_are_refused_by_the_schema(schema):  # noqa: F811
    assert _request_validator(schema, "memory_write_batch").is_valid({"items": []}) is False
    assert _request_validator(schema, "memory_recall").is_valid({"query": "  "}) is False
    assert _request_validator(schema, "memory_recall").is_valid({"query": "staging db"}) is True


def test_the_idempotency_key_schema_is_what_the_server_accepts(schema):  # noqa: F811
    header = jsonschema.Draft7Validator(_header_schema(schema, "memory_write", "Idempotency-Key"))

    assert header.is_valid("0b1c2d3e-retry-1") is True
    assert header.is_valid("two words") is False
    assert header.is_valid("") is False
    assert header.is_valid("k" * 256) is False
