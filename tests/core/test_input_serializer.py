"""InputSerializer: cheap copies of the declared fields validate exactly as DRF's deep copies."""

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.urls import get_resolver
from rest_framework import serializers
from typing_extensions import override

from apps.core.api.fields import InputSerializer
from apps.memory.apis.memories import MemoryBatchInputSerializer, MemoryWriteInputSerializer
from apps.memory.apis.sessions import SessionTurnCreateInputSerializer

BODIES: list[dict[str, Any]] = [
    {"text": "tea in the garden", "tags": ["home", "tea"], "confidence": 0.5},
    {"text": "  ", "tags": ["x" * 65]},
    {"text": "kayak", "occurred_at": "2026-07-01T12:30:00+02:00", "metadata": {"a": 1}},
    {"tier": "session", "session_id": "s-1", "content": "hi", "role": "user", "ttl_seconds": 60},
    {"tier": "session", "session_id": "s-1", "role": "wizard"},
    {"text": "violin", "tags": "not a list", "supersedes": "nope"},
    {"tier": "nowhere"},
]


class DeepCopied(MemoryWriteInputSerializer):
    """The same declarations, copied the way DRF copies them."""

    @override
    def get_fields(self) -> Any:
        return serializers.Serializer.get_fields(self)


def _outcome(serializer: serializers.Serializer[Any]) -> Any:
    if serializer.is_valid():
        return ("valid", dict(serializer.validated_data))
    return ("invalid", serializer.errors)


@pytest.mark.parametrize("body", BODIES)
def test_it_validates_as_drfs_own_copies_do(body):
    assert _outcome(MemoryWriteInputSerializer(data=body)) == _outcome(DeepCopied(data=body))


def test_each_instance_binds_its_own_fields_and_the_declarations_stay_unbound():
    first, second = MemoryWriteInputSerializer(), MemoryWriteInputSerializer()

    for name, field in first.fields.items():
        assert field is not second.fields[name]
        assert field.parent is first
        assert second.fields[name].parent is second
    for field in MemoryWriteInputSerializer._declared_fields.values():
        assert getattr(field, "parent", None) is None


def test_a_field_changed_on_one_instance_stays_changed_there_only():
    # The session-turn body makes `content` required on its own copies of the write's fields.
    assert SessionTurnCreateInputSerializer().fields["content"].required is True
    assert MemoryWriteInputSerializer().fields["content"].required is False


def test_a_nested_serializer_is_still_copied_deeply():
    first, second = MemoryBatchInputSerializer(), MemoryBatchInputSerializer()
    first_items, second_items = first.fields["items"], second.fields["items"]
    assert isinstance(first_items, serializers.ListSerializer)
    assert isinstance(second_items, serializers.ListSerializer)

    assert first_items is not second_items
    assert first_items.child is not second_items.child
    assert first_items.child.fields["text"].root is first


def test_threads_validating_at_once_each_get_their_own_result():
    expected = [_outcome(DeepCopied(data=body)) for body in BODIES]

    def validate(index: int) -> Any:
        return _outcome(MemoryWriteInputSerializer(data=BODIES[index % len(BODIES)]))

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(validate, range(700)))

    for index, outcome in enumerate(outcomes):
        assert outcome == expected[index % len(BODIES)]


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set(cls.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found))


def test_every_request_serializer_copies_cheaply():
    assert get_resolver().url_patterns  # resolving them imports every API module
    suffixes = ("InputSerializer", "FilterSerializer", "QuerySerializer")
    request_serializers = [
        cls
        for cls in _subclasses(serializers.Serializer)
        if cls.__module__.startswith("apps.") and cls.__name__.endswith(suffixes)
    ]

    assert len(request_serializers) >= 20
    # One that derives from plain Serializer would go back to deep copies on every request.
    assert [
        cls.__name__ for cls in request_serializers if not issubclass(cls, InputSerializer)
    ] == []
