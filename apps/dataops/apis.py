"""Erasure of the caller's own subject (or, for an operator, a named subject)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import InputSerializer, TimestampField
from apps.core.api.serializers import WRITE_ERRORS
from apps.dataops.exceptions import EraseSubjectForbidden, EraseSubjectRequired
from apps.dataops.services import erase_subject
from apps.memory.models import SUBJECT_ID_MAX_LENGTH
from apps.tenancy.api_base import TenantApi, idempotent


class MemoryEraseInputSerializer(InputSerializer):
    subject_id = serializers.CharField(
        required=False,
        max_length=SUBJECT_ID_MAX_LENGTH,
        help_text="Superadmin (impersonating the tenant) only: the subject to erase. Any "
        "other key erases its own subject and may only name that.",
    )
    dry_run = serializers.BooleanField(required=False, default=False)


class ErasureScopeOutputSerializer(serializers.Serializer[dict[str, Any]]):
    type = serializers.ChoiceField(choices=["subject", "tenant"])
    tenant_id = serializers.UUIDField()
    subject_sha256 = serializers.CharField(required=False)


class ErasureReceiptOutputSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.UUIDField(allow_null=True, help_text="null on a dry run (nothing stored).")
    scope = ErasureScopeOutputSerializer()
    requested_by = serializers.CharField()
    created_at = TimestampField(allow_null=True)
    counts = serializers.DictField(child=serializers.IntegerField())
    verified = serializers.BooleanField()


class MemoryEraseOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ErasureReceiptOutputSerializer()
    meta = serializers.DictField()


class MemoryEraseApi(TenantApi):
    @extend_schema(
        operation_id="memory_erase",
        request=MemoryEraseInputSerializer,
        responses={200: MemoryEraseOutputSerializer, **WRITE_ERRORS},
        tags=["memory"],
    )
    # NOTE: the erasure also deletes this request's own claim (an idempotency record of the
    # subject), so a replay of the key runs again; erasing twice is harmless.
    @idempotent
    def post(self, request: Request) -> Response:
        """Erase everything of one subject and return the receipt (counts, never content).

        One transaction: session turns, memories and their history, promotion watermarks and
        jobs, tombstones, idempotency records, owner-visible and graduated articles with their
        links and access events; then a verification pass (`verified`). An agent erases its
        own subject; a superadmin impersonating the tenant names `subject_id` (422
        `subject_required` without it); any other key naming another subject → 403
        `erase_subject_forbidden`. `dry_run: true` returns the same counts, changes nothing.
        """
        payload = MemoryEraseInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        named = payload.validated_data.get("subject_id")
        if self.scope.is_superadmin:
            if not named:
                raise EraseSubjectRequired("A superadmin names the subject_id to erase.")
            subject_id = named
        else:
            if named and named != self.scope.subject_id:
                raise EraseSubjectForbidden("A key may erase only its own subject.")
            subject_id = self.scope.subject_id
        erasure = erase_subject(
            tenant=self.scope.tenant,
            subject_id=subject_id,
            requested_by=f"api_key:{self.scope.api_key.pk}",
            dry_run=payload.validated_data["dry_run"],
        )
        return Response({"data": erasure.receipt, "meta": {"dry_run": erasure.dry_run}})
