"""The client's response models against the OpenAPI schema the server publishes, and the
size limits it assumes against the server's settings.

Every model in ``SCHEMA_COMPONENTS`` must declare exactly the component's properties, with
the same required set, nullability and types; a serializer change that the client does not
follow fails here.
"""

import functools
import operator
import types
import typing
from datetime import datetime
from uuid import UUID

import pytest
from drf_spectacular.generators import SchemaGenerator
from engram_client import _core
from engram_client.models import SCHEMA_COMPONENTS, EngramModel, Memory
from pydantic.fields import FieldInfo

SCALARS = {
    ("string", None): str,
    ("string", "uuid"): UUID,
    ("string", "date-time"): datetime,
    ("integer", None): int,
    ("number", "double"): float,
    ("number", None): float,
    ("boolean", None): bool,
}


@pytest.fixture(scope="module")
def components():
    return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


def _strip_none(annotation) -> tuple[object, bool]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        return (args[0] if len(args) == 1 else functools.reduce(operator.or_, args)), nullable
    return annotation, False


def _problems(annotation, prop: dict, components: dict, where: str) -> list[str]:
    """Why ``annotation`` cannot hold what the schema property ``prop`` describes."""
    ref = prop.get("$ref") or next(
        (part["$ref"] for part in prop.get("allOf", []) if "$ref" in part), None
    )
    if ref:
        name = ref.rsplit("/", 1)[-1]
        target = components[name]
        if "enum" in target:
            if typing.get_origin(annotation) is typing.Literal:
                if set(typing.get_args(annotation)) != set(target["enum"]):
                    return [f"{where}: Literal {typing.get_args(annotation)} != {target['enum']}"]
                return []
            return [] if annotation is str else [f"{where}: enum {name} wants str or Literal"]
        if SCHEMA_COMPONENTS.get(annotation) != name:
            return [f"{where}: {annotation!r} does not mirror {name}"]
        return []
    kind = prop.get("type")
    if kind == "array":
        if typing.get_origin(annotation) is not list:
            return [f"{where}: wants a list"]
        (item,) = typing.get_args(annotation)
        return _problems(item, prop["items"], components, f"{where}[]")
    if kind == "object":
        ok = typing.get_origin(annotation) is dict and typing.get_args(annotation)[0] is str
        return [] if ok else [f"{where}: wants dict[str, ...]"]
    expected = SCALARS.get((kind, prop.get("format")))
    if typing.get_origin(annotation) is typing.Literal and "enum" in prop:
        return []
    if expected is None or annotation is not expected:
        return [f"{where}: {annotation!r} is not {kind}/{prop.get('format')}"]
    return []


def _drift(model: type[EngramModel], component: dict, components: dict) -> list[str]:
    fields: dict[str, FieldInfo] = {
        info.alias or name: info for name, info in model.model_fields.items()
    }
    properties = component["properties"]
    required = set(component.get("required", []))
    problems = [f"missing field {name}" for name in sorted(set(properties) - set(fields))]
    problems += [f"field {name} not in schema" for name in sorted(set(fields) - set(properties))]
    for name in sorted(set(fields) & set(properties)):
        info, prop = fields[name], properties[name]
        annotation, nullable = _strip_none(info.annotation)
        if info.is_required() != (name in required):
            problems.append(f"{name}: required is {info.is_required()}, schema {name in required}")
        if prop.get("nullable", False) and not nullable:
            problems.append(f"{name}: schema allows null, the model does not")
        if nullable and not prop.get("nullable", False) and name in required:
            problems.append(f"{name}: the model allows null, the schema never sends it")
        problems += _problems(annotation, prop, components, name)
    return problems


@pytest.mark.parametrize(
    ("_case", "model"), [(name, model) for model, name in SCHEMA_COMPONENTS.items()]
)
def test_each_model_mirrors_its_schema_component(components, _case, model):
    assert _drift(model, components[SCHEMA_COMPONENTS[model]], components) == []


def test_a_drifted_model_is_caught(components):
    class Drifted(EngramModel):
        id: str  # the schema says uuid
        text: str | None  # the schema says never null
        extra_field: int

    problems = _drift(Drifted, components["MemoryOutput"], components)

    assert "field extra_field not in schema" in problems
    assert "missing field subject_id" in problems
    assert "id: <class 'str'> is not string/uuid" in problems
    assert "text: the model allows null, the schema never sends it" in problems
    assert _drift(Memory, components["MemoryOutput"], components) == []


def test_the_clients_size_limits_are_the_servers(settings):
    # A larger client constant is a 422 on every full batch or page; a smaller one wastes
    # requests (EngramSession.add_items, memories(), session_turns()).
    assert (_core.BATCH_MAX_ITEMS, _core.MEMORY_PAGE_MAX) == (
        settings.MEMORY_BATCH_MAX_ITEMS,
        settings.MEMORY_LIST_MAX_LIMIT,
    )
