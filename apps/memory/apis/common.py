"""What every memory resource shares: the memory and turn shapes, write errors."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from apps.core.api.fields import TimestampField
from apps.memory.models import Memory


class MemoryOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    subject_id = serializers.CharField()
    text = serializers.CharField()
    # DRF moves declared fields off the class, so `context` does not clobber Field.context at
    # run time; the type checker only sees the name.
    context = serializers.CharField()  # type: ignore[assignment]
    tags = serializers.ListField(child=serializers.CharField())
    metadata = serializers.DictField()
    project_id = serializers.UUIDField(allow_null=True)
    # A field named `source` shadows Field.source for the type checker only.
    source = serializers.CharField()  # type: ignore[assignment]
    source_session_id = serializers.CharField()
    source_turn_seqs = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Promoted memories: the seqs of the session turns it was compiled from.",
    )
    compiler = serializers.CharField(
        help_text="Promoted memories: the compiler that produced it (heuristic, openai/<model>…)."
    )
    occurred_at = TimestampField(
        help_text="When it happened or was said: as written, else the write time; for a promoted "
        "memory the turn's time or the date the compiler resolved from it."
    )
    confidence = serializers.FloatField()
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)
    superseded_at = TimestampField(allow_null=True)
    recall_count = serializers.IntegerField()
    last_recalled_at = TimestampField(allow_null=True)
    embedding_status = serializers.SerializerMethodField()
    created_at = TimestampField()

    def get_embedding_status(self, memory: Memory) -> str:
        # `embedded_at` is set in the same UPDATE as the vector, so it is a faithful proxy
        # that does not require loading the 384-float column.
        return "ready" if memory.embedded_at is not None else "pending"


class SessionTurnOutputSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    session_id = serializers.CharField()
    role = serializers.CharField()
    content = serializers.CharField()
    metadata = serializers.DictField()
    expires_at = TimestampField()
    occurred_at = TimestampField()
    created_at = TimestampField()


class MemoryWrittenSerializer(MemoryOutputSerializer):
    tier = serializers.ChoiceField(choices=["long_term"])


class SessionTurnWrittenSerializer(SessionTurnOutputSerializer):
    tier = serializers.ChoiceField(choices=["session"])


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="MemoryWriteResult",
        serializers={"long_term": MemoryWrittenSerializer, "session": SessionTurnWrittenSerializer},
        resource_type_field_name="tier",
    )
)
class MemoryWrittenField(serializers.DictField):
    """One written item as a write answers it: a memory (``tier: long_term``) or a session
    turn (``tier: session``). Rendered by the view; the field only types it for OpenAPI."""


class ListMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
