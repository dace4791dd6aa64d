"""One long-term memory by id (/api/v1/memory/{id}): read it with its provenance, forget it."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.serializers import COMMON_ERRORS, WRITE_ERRORS, ErrorSerializer
from apps.memory.apis.common import MemoryOutputSerializer
from apps.memory.models import MemorySource
from apps.memory.selectors import memory_provenance
from apps.memory.services import memory_forget, memory_forget_any
from apps.tenancy.api_base import TenantApi, idempotent


class MemoryDerivedFromOutputSerializer(serializers.Serializer[dict[str, Any]]):
    source = serializers.ChoiceField(choices=MemorySource.values)  # type: ignore[assignment]
    session_id = serializers.CharField(allow_null=True)
    turn_seqs = serializers.ListField(child=serializers.IntegerField())
    turns_present = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The seqs of turn_seqs still held (turns expire with their session TTL).",
    )
    compiler = serializers.CharField(allow_null=True)
    supersedes = serializers.ListField(child=serializers.UUIDField())


class MemoryDerivedArticleOutputSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    status = serializers.CharField()
    visibility = serializers.CharField()
    relation = serializers.ChoiceField(choices=["graduated", "deduplicated_into"])


class MemoryProvenanceOutputSerializer(serializers.Serializer[dict[str, Any]]):
    derived_from = MemoryDerivedFromOutputSerializer()
    derived_to = MemoryDerivedArticleOutputSerializer(many=True)


class MemoryDetailDataOutputSerializer(MemoryOutputSerializer):
    provenance = MemoryProvenanceOutputSerializer()


class MemoryDetailOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = MemoryDetailDataOutputSerializer()
    meta = serializers.DictField()


class MemoryDetailApi(TenantApi):
    rate_limit_exempt = {"GET": "one row by id, with its provenance"}

    @extend_schema(
        operation_id="memory_get",
        responses={200: MemoryDetailOutputSerializer, **COMMON_ERRORS, 404: ErrorSerializer},
        tags=["memory"],
    )
    def get(self, request: Request, memory_id: uuid.UUID) -> Response:
        """One of the caller's memories with its provenance.

        `provenance.derived_from`: its source, the session and turn seqs it was promoted
        from (and which of them still exist), the compiler, and the versions it superseded.
        `provenance.derived_to`: the article graduated from it (`graduated`) or the existing
        article its graduation was deduplicated into. A superadmin impersonating the tenant
        may read any subject's memory; another subject's id is the same 404 as a missing one.
        """
        provenance = memory_provenance(
            tenant=self.scope.tenant,
            subject_id=None if self.scope.is_superadmin else self.scope.subject_id,
            memory_id=memory_id,
        )
        data = {
            **MemoryOutputSerializer(provenance.memory).data,
            "provenance": {
                "derived_from": provenance.derived_from(),
                "derived_to": [
                    {
                        "id": str(article.id),
                        "title": article.title,
                        "status": article.status,
                        "visibility": article.visibility,
                        "relation": article.relation,
                    }
                    for article in provenance.derived_to
                ],
            },
        }
        return Response({"data": data, "meta": {}})

    @extend_schema(
        operation_id="memory_forget",
        responses={204: None, **WRITE_ERRORS},
        tags=["memory"],
    )
    @idempotent
    def delete(self, request: Request, memory_id: uuid.UUID) -> Response:
        """Forget one of the caller's memories (and the older versions it superseded).

        The forget cascades: articles graduated from those rows are deleted, and a tombstone
        of each row's content fingerprint (never its text) keeps promotion and graduation from
        re-creating it; an explicit write of the same text later removes the tombstone. A
        superadmin impersonating a tenant may forget any subject's memory. Another
        subject's or tenant's id is the same 404 as a missing one.
        """
        if self.scope.is_superadmin:
            memory_forget_any(tenant=self.scope.tenant, memory_id=memory_id)
        else:
            memory_forget(
                tenant=self.scope.tenant, subject_id=self.scope.subject_id, memory_id=memory_id
            )
        return Response(status=status.HTTP_204_NO_CONTENT)
