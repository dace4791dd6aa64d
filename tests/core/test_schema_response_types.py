"""Every success response the schema documents says what its ``data`` holds.

A generated client reads ``data`` through the schema: an untyped object there (``data: {}``,
an ``additionalProperties: {}`` map, an array of such maps) gives it nothing to read. The walk
follows ``data`` through references, arrays, ``allOf`` and ``oneOf`` into every nested object;
the only free-form objects allowed are the maps a caller fills itself (``metadata``).
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

#: Properties whose content is the caller's own, stored and returned as given.
FREE_FORM = frozenset({"metadata"})
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    generated: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    return generated


def _untyped(node: dict[str, Any], components: dict[str, Any], where: str, seen: set[str]):
    """The places under ``node`` that describe an object without saying what it holds."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return []
        return _untyped(components[name], components, f"{where}<{name}>", {*seen, name})
    found: list[str] = []
    for combinator in ("allOf", "oneOf", "anyOf"):
        for part in node.get(combinator, []):
            found += _untyped(part, components, where, seen)
    if any(combinator in node for combinator in ("allOf", "oneOf", "anyOf", "enum")):
        return found
    kind = node.get("type")
    if kind == "array":
        return found + _untyped(node.get("items", {}), components, f"{where}[]", seen)
    if kind not in (None, "object"):
        return found
    properties = node.get("properties", {})
    values = node.get("additionalProperties")
    if not properties and not (isinstance(values, dict) and values):
        return [*found, where or "data"]
    for name, child in properties.items():
        if name not in FREE_FORM:
            found += _untyped(child, components, f"{where}.{name}", seen)
    if isinstance(values, dict) and values:
        found += _untyped(values, components, f"{where}{{}}", seen)
    return found


def _success_bodies(schema: dict[str, Any]):
    for path, operations in schema["paths"].items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            for status, response in operation["responses"].items():
                if not status.startswith("2"):
                    continue
                for media_type, content in response.get("content", {}).items():
                    yield f"{method.upper()} {path} {status} {media_type}", content["schema"]


def _resolve(node: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = components[node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_every_success_body_has_a_required_typed_data(schema):
    components = schema["components"]["schemas"]
    problems: list[str] = []
    bodies = list(_success_bodies(schema))
    for label, body in bodies:
        envelope = _resolve(body, components)
        if "data" not in envelope.get("properties", {}):
            problems.append(f"{label}: no data")
            continue
        if "data" not in envelope.get("required", []):
            problems.append(f"{label}: data is optional")
        problems += [
            f"{label}: untyped {where}"
            for where in _untyped(envelope["properties"]["data"], components, "data", set())
        ]

    assert len(bodies) > 30
    assert problems == []


def test_the_walk_finds_an_untyped_data():
    # The check itself: an untyped data, a list of untyped maps, a nested untyped object.
    components = {"Item": {"type": "object", "properties": {"extra": {"type": "object"}}}}

    assert _untyped({"type": "object", "additionalProperties": {}}, components, "data", set()) == [
        "data"
    ]
    assert _untyped(
        {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
        components,
        "data",
        set(),
    ) == ["data[]"]
    assert _untyped({"$ref": "#/components/schemas/Item"}, components, "data", set()) == [
        "data<Item>.extra"
    ]
    assert (
        _untyped(
            {"type": "object", "properties": {"metadata": {"type": "object"}}},
            components,
            "data",
            set(),
        )
        == []
    )


def test_a_write_answers_a_memory_or_a_turn_told_apart_by_tier(schema):
    components = schema["components"]["schemas"]
    operations = {
        operation["operationId"]: operation
        for operations in schema["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    single = _resolve(
        operations["memory_write"]["responses"]["201"]["content"]["application/json"]["schema"],
        components,
    )
    batch = _resolve(
        operations["memory_write_batch"]["responses"]["201"]["content"]["application/json"][
            "schema"
        ],
        components,
    )

    written = _resolve(single["properties"]["data"]["allOf"][0], components)
    assert batch["properties"]["data"]["items"] == single["properties"]["data"]["allOf"][0]
    assert written["discriminator"] == {
        "propertyName": "tier",
        "mapping": {
            "long_term": "#/components/schemas/MemoryWritten",
            "session": "#/components/schemas/SessionTurnWritten",
        },
    }
    assert set(components["MemoryWritten"]["properties"]) == {
        *components["MemoryOutput"]["properties"],
        "tier",
    }
    assert set(components["SessionTurnWritten"]["properties"]) == {
        *components["SessionTurnOutput"]["properties"],
        "tier",
    }


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable`` as JSON Schema says it, for a validator."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def _validate(schema: dict[str, Any], operation_id: str, status: str, body: Any) -> None:
    operation = next(
        operation
        for operations in schema["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict) and operation.get("operationId") == operation_id
    )
    response = operation["responses"][status]["content"]["application/json"]["schema"]
    document = {"allOf": [response], "components": _json_schema(schema["components"])}
    jsonschema.validate(body, document)


@pytest.mark.django_db
def test_the_written_items_match_their_schema(schema, agent):
    memory = agent.post("/api/v1/memory", {"text": "Staging runs PostgreSQL 18."})
    turn = agent.post(
        "/api/v1/memory",
        {"tier": "session", "session_id": "s1", "content": "hello", "ttl_seconds": 600},
    )
    batch = agent.post(
        "/api/v1/memory/batch",
        {
            "items": [
                {"text": "Deploys happen on Thursdays."},
                {"tier": "session", "session_id": "s1", "content": "bye", "ttl_seconds": 600},
            ]
        },
    )

    assert (memory.status_code, turn.status_code, batch.status_code) == (201, 201, 201)
    assert [item["tier"] for item in batch.json()["data"]] == ["long_term", "session"]
    for body in (memory.json(), turn.json()):
        _validate(schema, "memory_write", "201", body)
    _validate(schema, "memory_write_batch", "201", batch.json())
    with pytest.raises(jsonschema.ValidationError):
        _validate(schema, "memory_write", "201", {"data": {"tier": "session"}, "meta": {}})
