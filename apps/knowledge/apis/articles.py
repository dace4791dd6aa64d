"""HTTP API for articles under /api/v1/knowledge/articles (thin: validate → one call → render)."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.api.fields import (
    INT32_MAX,
    InputSerializer,
    LimitField,
    OffsetField,
    TimestampField,
)
from apps.core.api.serializers import COMMON_ERRORS, ErrorSerializer, render_many
from apps.knowledge.apis.fields import (
    ArticleCategoryField,
    ArticleSourceField,
    ArticleStatusField,
    ArticleVisibilityField,
    LinkDirectionField,
    LinkKindField,
    ProposalVerdictField,
)
from apps.knowledge.models import TAG_MAX_LENGTH, TITLE_MAX_LENGTH, Article, ArticleStatus
from apps.knowledge.selectors import LinkView, article_list
from apps.knowledge.services import (
    UNSET,
    ArticleChanges,
    Proposal,
    article_archive,
    article_create,
    article_open,
    article_publish,
    article_update,
    propose_article,
)
from apps.knowledge.viewer import Viewer
from apps.tenancy.api_base import EMBEDDING_WRITE, RECALL, WRITE, TenantApi, idempotent
from apps.tenancy.models import ApiKeyRole

TAGS = ["knowledge"]
CURATOR_ROLES = frozenset({ApiKeyRole.USER, ApiKeyRole.ORCHESTRATOR, ApiKeyRole.SUPERADMIN})
READ_ERRORS = {**COMMON_ERRORS, 404: ErrorSerializer}
WRITE_ERRORS = {**READ_ERRORS, 409: ErrorSerializer, 423: ErrorSerializer}


# ----------------------------------------------------------------------------- output shapes


class ArticleSummaryOutputSerializer(serializers.Serializer[Article]):
    """An article without its body (lists, verdicts, links)."""

    id = serializers.UUIDField()
    title = serializers.CharField()
    category = ArticleCategoryField()
    tags = serializers.ListField(child=serializers.CharField())
    status = ArticleStatusField()
    visibility = ArticleVisibilityField()
    owner_agent_id = serializers.CharField()
    # Annotated `Any`: `source` shadows Field.source (a str) for the type checker only.
    source: Any = ArticleSourceField()
    source_memory_id = serializers.UUIDField(allow_null=True)
    project_id = serializers.UUIDField(allow_null=True)
    version = serializers.IntegerField()
    published_at = TimestampField(allow_null=True)
    embedding_status = serializers.SerializerMethodField()
    created_at = TimestampField()
    updated_at = TimestampField()

    def get_embedding_status(self, article: Article) -> str:
        # `embedded_at` is written with the vector, so it answers without loading 384 floats.
        return "ready" if article.embedded_at is not None else "pending"


class ArticleOutputSerializer(ArticleSummaryOutputSerializer):
    body = serializers.CharField()


class ArticleLinkOutputSerializer(serializers.Serializer[LinkView]):
    kind = LinkKindField()
    direction = LinkDirectionField()
    article = ArticleSummaryOutputSerializer(source="other")


class ArticleDetailDataSerializer(ArticleOutputSerializer):
    links = ArticleLinkOutputSerializer(many=True)


class ArticleListMetaSerializer(serializers.Serializer[dict[str, Any]]):
    total_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()


# Envelopes exist for the schema. `data: Any` because a field named `data` shadows
# Serializer.data for the type checker (the metaclass moves declared fields aside at runtime).
class ArticleListOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ArticleSummaryOutputSerializer(many=True)
    meta = ArticleListMetaSerializer()


class ArticleProposalOutputSerializer(serializers.Serializer[Proposal]):
    verdict = ProposalVerdictField()
    created = serializers.BooleanField()
    article = ArticleSummaryOutputSerializer()


class ArticleCreateOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ArticleProposalOutputSerializer()
    meta = serializers.DictField()


class ArticleDetailOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ArticleDetailDataSerializer()
    meta = serializers.DictField()


class ArticleUpdateOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ArticleOutputSerializer()
    meta = serializers.DictField()


class ArticlePublishOutputSerializer(serializers.Serializer[dict[str, Any]]):
    data: Any = ArticleSummaryOutputSerializer()
    meta = serializers.DictField()


# ----------------------------------------------------------------------------- /articles


class ArticleListFilterSerializer(InputSerializer):
    status = ArticleStatusField(
        required=False, help_text="Curators may pass `archived` to list archived articles."
    )
    category = ArticleCategoryField(required=False)
    tag = serializers.CharField(required=False, max_length=TAG_MAX_LENGTH)
    project_id = serializers.UUIDField(required=False)
    q = serializers.CharField(
        required=False, max_length=settings.KNOWLEDGE_QUERY_MAX_CHARS, help_text="Websearch syntax."
    )
    limit = LimitField(default=50, max_value=settings.KNOWLEDGE_LIST_MAX_LIMIT)
    offset = OffsetField()


class ArticleCreateInputSerializer(InputSerializer):
    title = serializers.CharField(max_length=TITLE_MAX_LENGTH)
    body = serializers.CharField(
        trim_whitespace=False, max_length=settings.KNOWLEDGE_BODY_MAX_CHARS, help_text="Markdown."
    )
    category = ArticleCategoryField()
    tags = serializers.ListField(
        child=serializers.CharField(max_length=TAG_MAX_LENGTH),
        required=False,
        default=list,
        max_length=settings.KNOWLEDGE_TAGS_MAX,
        help_text="A tag `alias:<phrase>` makes a curated article the curated answer to "
        "<phrase>; agents cannot add one (403 `alias_tag_reserved`).",
    )
    project_id = serializers.UUIDField(required=False, allow_null=True, default=None)
    visibility = ArticleVisibilityField(required=False, default="tenant")
    owner_agent_id = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Curators only (required for owner visibility); an agent always owns its own.",
    )
    status = ArticleStatusField(
        required=False,
        default=ArticleStatus.PUBLISHED,
        help_text="Curators only; an agent's article gets the status the novelty gate decides.",
    )


def _proposal_response(proposal: Proposal) -> Response:
    data = ArticleProposalOutputSerializer(proposal).data
    code = status.HTTP_201_CREATED if proposal.created else status.HTTP_200_OK
    return Response({"data": data, "meta": {}}, status=code)


class ArticleListApi(TenantApi):
    rate_limits = {"POST": EMBEDDING_WRITE}
    rate_limit_exempt = {
        "GET": "a page ordered by title; q is an indexed full-text filter, nothing embedded"
    }

    @extend_schema(
        operation_id="knowledge_articles_list",
        parameters=[ArticleListFilterSerializer],
        responses={200: ArticleListOutputSerializer, **COMMON_ERRORS},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        """List the articles the caller can see, ordered by title (no bodies).

        Agents see published tenant-wide articles plus their own; curators (user,
        orchestrator, superadmin) see every non-archived article, and archived ones with
        `status=archived`. `project_id` narrows to global ∪ that project.
        """
        filters = ArticleListFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        page = article_list(
            tenant=self.scope.tenant, viewer=Viewer.from_scope(self.scope), **filters.validated_data
        )
        return Response(
            {
                "data": render_many(ArticleSummaryOutputSerializer, page.results),
                "meta": page.meta,
            }
        )

    @extend_schema(
        operation_id="knowledge_articles_create",
        request=ArticleCreateInputSerializer,
        responses={
            201: ArticleCreateOutputSerializer,
            200: ArticleCreateOutputSerializer,
            **WRITE_ERRORS,
            503: ErrorSerializer,
        },
        tags=TAGS,
    )
    @idempotent
    def post(self, request: Request) -> Response:
        """Write an article. Returns `{verdict, created, article}`.

        An agent's write goes through the novelty gate: `created` (published) or
        `gated_to_draft` (a near-duplicate, kept as a draft linked `potential_conflict` to
        its neighbour) → 201; `duplicate` (same content) or `deduplicated` (cosine ≥ the
        dedupe threshold) → 200 with the canonical article, nothing written. Embeddings
        unavailable → 503 `gate_unavailable`, nothing written. Curators create directly
        with the status they choose, still deduplicated by exact content. A title another
        non-archived article holds → 409 `title_taken`. Past the articles you wrote
        (`ENGRAM_KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR`) or the tenant stores
        (`ENGRAM_KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT`), archived ones included → 409
        `article_quota_exceeded` (`details.scope`: `author` or `tenant`), nothing written
        (an agent's write spends no embedding on it).
        """
        payload = ArticleCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = dict(payload.validated_data)
        viewer = Viewer.from_scope(self.scope)
        if viewer.is_agent:
            args.pop("status")
            proposal = propose_article(tenant=self.scope.tenant, viewer=viewer, **args)
        else:
            proposal = article_create(tenant=self.scope.tenant, viewer=viewer, **args)
        return _proposal_response(proposal)


# ----------------------------------------------------------------------------- /articles/{id}


class ArticleOpenFilterSerializer(InputSerializer):
    search_id = serializers.UUIDField(
        required=False,
        help_text="Your search (or merged recall) that surfaced the article, to attribute the "
        "open to it in the retrieval funnel; any other id is 422 `not_surfaced`.",
    )


class ArticleUpdateInputSerializer(InputSerializer):
    version = serializers.IntegerField(
        min_value=1, max_value=INT32_MAX, help_text="The version you read."
    )
    title = serializers.CharField(required=False, max_length=TITLE_MAX_LENGTH)
    body = serializers.CharField(
        required=False, trim_whitespace=False, max_length=settings.KNOWLEDGE_BODY_MAX_CHARS
    )
    category = ArticleCategoryField(required=False)
    tags = serializers.ListField(
        child=serializers.CharField(max_length=TAG_MAX_LENGTH),
        required=False,
        max_length=settings.KNOWLEDGE_TAGS_MAX,
    )
    project_id = serializers.UUIDField(required=False, allow_null=True)
    visibility = ArticleVisibilityField(required=False)
    owner_agent_id = serializers.CharField(
        required=False, allow_blank=True, help_text="Curators only."
    )


class ArticleDetailApi(TenantApi):
    # A read records the open (an access event), as a search records what it surfaced.
    rate_limits = {"GET": RECALL, "PATCH": EMBEDDING_WRITE, "DELETE": WRITE}

    @extend_schema(
        operation_id="knowledge_articles_retrieve",
        parameters=[
            ArticleOpenFilterSerializer,
            OpenApiParameter("article_id", uuid.UUID, OpenApiParameter.PATH),
        ],
        responses={200: ArticleDetailOutputSerializer, **READ_ERRORS},
        tags=TAGS,
    )
    def get(self, request: Request, article_id: uuid.UUID) -> Response:
        """Read one article in full, with its visible links; recorded as `opened`.

        An article the caller cannot see is the same 404 as a missing one. `search_id` must
        name a search of the caller's own that surfaced this article, else 422
        `not_surfaced` and nothing is recorded; only such attributed opens count in the
        retrieval funnel's `opened` and `open_rate`.
        """
        filters = ArticleOpenFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        opened = article_open(
            tenant=self.scope.tenant,
            viewer=Viewer.from_scope(self.scope),
            api_key_id=self.scope.api_key.pk,
            article_id=article_id,
            search_id=filters.validated_data.get("search_id"),
        )
        data = {
            **ArticleOutputSerializer(opened.article).data,
            "links": [ArticleLinkOutputSerializer(link).data for link in opened.links],
        }
        return Response({"data": data, "meta": {}})

    @extend_schema(
        operation_id="knowledge_articles_update",
        parameters=[OpenApiParameter("article_id", uuid.UUID, OpenApiParameter.PATH)],
        request=ArticleUpdateInputSerializer,
        responses={200: ArticleUpdateOutputSerializer, 503: ErrorSerializer, **WRITE_ERRORS},
        tags=TAGS,
    )
    @idempotent
    def patch(self, request: Request, article_id: uuid.UUID) -> Response:
        """Edit an article, naming the `version` you read.

        A stale version → 409 `version_conflict` (with `details.current_version`); agents
        may edit only their own articles (403 `not_article_owner`); an archived article →
        409 `article_archived`. A changed title or body goes through the novelty gate
        against the other articles you can see: the same body as one of them is 409
        `duplicate`, and for agents a paraphrase at or above the dedupe threshold is 409
        `deduplicated` (`details.article_id` names it; nothing is changed); an agent's text
        edit while embeddings are down is 503 `gate_unavailable`. The new text is
        re-embedded.
        """
        payload = ArticleUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        args = payload.validated_data
        changes = ArticleChanges(
            title=args.get("title"),
            body=args.get("body"),
            category=args.get("category"),
            tags=args.get("tags"),
            visibility=args.get("visibility"),
            owner_agent_id=args.get("owner_agent_id"),
            project_id=args.get("project_id", UNSET),
        )
        article = article_update(
            tenant=self.scope.tenant,
            viewer=Viewer.from_scope(self.scope),
            article_id=article_id,
            version=args["version"],
            changes=changes,
        )
        return Response({"data": ArticleOutputSerializer(article).data, "meta": {}})

    @extend_schema(
        operation_id="knowledge_articles_archive",
        parameters=[OpenApiParameter("article_id", uuid.UUID, OpenApiParameter.PATH)],
        responses={204: None, **WRITE_ERRORS},
        tags=TAGS,
    )
    @idempotent
    def delete(self, request: Request, article_id: uuid.UUID) -> Response:
        """Archive an article: it leaves every read and frees its title.

        Agents may archive only their own articles (403 `not_article_owner`).
        """
        article_archive(
            tenant=self.scope.tenant, viewer=Viewer.from_scope(self.scope), article_id=article_id
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class ArticlePublishApi(TenantApi):
    allowed_roles = CURATOR_ROLES

    @extend_schema(
        operation_id="knowledge_articles_publish",
        parameters=[OpenApiParameter("article_id", uuid.UUID, OpenApiParameter.PATH)],
        request=None,
        responses={200: ArticlePublishOutputSerializer, **WRITE_ERRORS},
        tags=TAGS,
    )
    @idempotent
    def post(self, request: Request, article_id: uuid.UUID) -> Response:
        """Publish a draft (user, orchestrator and superadmin keys only; agents get 403).

        Publishing makes the article curated (it can then be the pinned answer for its title
        or aliases); publishing a published agent article only does that. An archived one →
        409 `article_archived`; a published tenant-visible article with the same title → 409
        `title_taken`.
        """
        article = article_publish(
            tenant=self.scope.tenant, viewer=Viewer.from_scope(self.scope), article_id=article_id
        )
        return Response({"data": ArticleSummaryOutputSerializer(article).data, "meta": {}})
