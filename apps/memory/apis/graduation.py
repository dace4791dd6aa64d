"""Graduation of a memory into the knowledge wiki (POST /api/v1/memory/graduate)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import CheckedChoiceField, CheckedInputSerializer, CheckedUUIDField
from apps.core.api.serializers import WRITE_ERRORS, ErrorSerializer
from apps.memory.services import (
    RE_SCOPE_GLOBAL,
    memory_graduate,
    parse_memory_id,
    parse_re_scope,
)
from apps.tenancy.api_base import EMBEDDING_WRITE, TenantApi, idempotent


class MemoryGraduateInputSerializer(CheckedInputSerializer):
    # Checked by the service's own parsers: invalid_memory_id, invalid_re_scope.
    memory_id = CheckedUUIDField(check=parse_memory_id)
    re_scope = CheckedChoiceField(
        check=parse_re_scope,
        choices=[RE_SCOPE_GLOBAL],
        required=False,
        allow_null=True,
        help_text='"global": make a project memory tenant-wide (first graduation only).',
    )


class GraduatedArticleSerializer(serializers.Serializer[Any]):
    """A body-less article summary; fetch the body from /api/v1/knowledge/articles/{id}."""

    id = serializers.UUIDField()
    title = serializers.CharField()
    category = serializers.CharField()
    status = serializers.CharField()
    visibility = serializers.CharField()
    project_id = serializers.UUIDField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())


class MemoryGraduateDataSerializer(serializers.Serializer[Any]):
    verdict = serializers.ChoiceField(
        choices=["created", "gated_to_draft", "duplicate", "deduplicated"]
    )
    created = serializers.BooleanField()
    article = GraduatedArticleSerializer()


class MemoryGraduateOutputSerializer(serializers.Serializer[Any]):
    data: Any = MemoryGraduateDataSerializer()
    meta = serializers.DictField()


class MemoryGraduateApi(TenantApi):
    rate_limits = {"POST": EMBEDDING_WRITE}

    @extend_schema(
        operation_id="memory_graduate",
        request=MemoryGraduateInputSerializer,
        responses={
            201: MemoryGraduateOutputSerializer,
            200: MemoryGraduateOutputSerializer,
            503: ErrorSerializer,
            **WRITE_ERRORS,
        },
        tags=["memory"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Graduate one of your memories into the knowledge wiki through its novelty gate.

        201 with a new article (`created`, or `gated_to_draft` for a near-duplicate draft);
        200 when it was already represented (`duplicate`, `deduplicated`) or already
        graduated. A memory whose article was deleted since (a forget of the article's
        source, which may be a peer's memory it was deduplicated into) graduates afresh.
        `re_scope: "global"` makes a project memory tenant-wide on its first
        graduation only (else 409 `already_graduated`). The article is owner-visible. 503
        `gate_unavailable` when embeddings are down (nothing stamped; retry). 409 `forgotten`
        when the subject forgot this text (a row an import brought back). 409
        `article_quota_exceeded` when you or the tenant already store the article quota
        (`details.scope`: `author` or `tenant`; nothing stamped).
        """
        payload = MemoryGraduateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        result = memory_graduate(
            tenant=self.scope.tenant,
            subject_id=self.scope.subject_id,
            memory_id=payload.validated_data["memory_id"],
            re_scope=payload.validated_data.get("re_scope"),
        )
        article = result.article
        data = {
            "verdict": result.verdict,
            "created": result.created,
            "article": {
                "id": article.pk,
                "title": article.title,
                "category": article.category,
                "status": article.status,
                "visibility": article.visibility,
                "project_id": article.project_id,
                "tags": article.tags,
            },
        }
        return Response(
            {"data": MemoryGraduateDataSerializer(data).data, "meta": {}},
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )
