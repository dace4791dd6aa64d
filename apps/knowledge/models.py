"""The knowledge wiki: curated articles, the links between them, and access events.

Models hold data and database-level invariants only (STYLE rule 2); every write goes through
``apps.knowledge.services`` and every read through ``apps.knowledge.selectors``.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from pgvector.django import VectorField
from typing_extensions import override

from apps.tenancy.models import TenantScopedModel

TITLE_MAX_LENGTH = 300
TAG_MAX_LENGTH = 64
AGENT_ID_MAX_LENGTH = 200
SUBJECT_ID_MAX_LENGTH = 200
#: The regconfig of the full-text column. Changing it means regenerating ``search_vector``.
TEXT_SEARCH_CONFIG = "english"
#: A tag of this form makes the article the curated answer for that phrase (see search).
ALIAS_TAG_PREFIX = "alias:"


class ArticleCategory(models.TextChoices):
    PATTERN = "pattern", "Pattern"
    DECISION = "decision", "Decision"
    FINDING = "finding", "Finding"
    REFERENCE = "reference", "Reference"


class ArticleStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    ARCHIVED = "archived", "Archived"


class ArticleVisibility(models.TextChoices):
    TENANT = "tenant", "Tenant"
    OWNER = "owner", "Owner"


class ArticleSource(models.TextChoices):
    MANUAL = "manual", "Manual"
    AGENT = "agent", "Agent"
    GRADUATED = "graduated", "Graduated"


class LinkKind(models.TextChoices):
    RELATES_TO = "relates_to", "Relates to"
    SUPERSEDES = "supersedes", "Supersedes"
    POTENTIAL_CONFLICT = "potential_conflict", "Potential conflict"


class AccessType(models.TextChoices):
    SURFACED = "surfaced", "Surfaced"
    OPENED = "opened", "Opened"
    REFERENCED = "referenced", "Referenced"


class Article(TenantScopedModel):
    """One curated wiki article (Markdown body), optionally filed under a project."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Partition key (NULL = tenant-wide), not an isolation boundary: reads see global ∪ project.
    # This and the other relations between tenant-owned rows are constrained in the database by
    # a two-column key, (tenant_id, project_id) -> (tenant_id, id) (migration 0008), so a row
    # points only at its own tenant's rows and each key can be checked inside one tenant's
    # shard; Django cannot declare such a key, so it declares none (db_constraint=False).
    project = models.ForeignKey(
        "projects.Project",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        db_constraint=False,
    )
    title = models.CharField(max_length=TITLE_MAX_LENGTH)
    body = models.TextField()
    category = models.CharField(max_length=16, choices=ArticleCategory.choices)
    tags = ArrayField(models.CharField(max_length=TAG_MAX_LENGTH), default=list, blank=True)
    status = models.CharField(
        max_length=16, choices=ArticleStatus.choices, default=ArticleStatus.PUBLISHED
    )
    visibility = models.CharField(
        max_length=16, choices=ArticleVisibility.choices, default=ArticleVisibility.TENANT
    )
    # The agent (subject id) that owns the article: required for owner-visible articles, and
    # stamped on every article an agent writes so it can see and edit its own drafts.
    owner_agent_id = models.CharField(max_length=AGENT_ID_MAX_LENGTH, blank=True, default="")
    # The subject whose key wrote it (an agent, a graduation's agent, a curator's key), charged
    # for it under the per-author quota. Blank when unknown: articles written before the
    # column (their owner, if any, was filled in) and imported articles nobody owns.
    author_subject_id = models.CharField(
        max_length=SUBJECT_ID_MAX_LENGTH, blank=True, default="", db_default=""
    )
    source = models.CharField(
        max_length=16, choices=ArticleSource.choices, default=ArticleSource.MANUAL
    )
    # A plain UUID, not a foreign key: knowledge must not depend on the memory app.
    source_memory_id = models.UUIDField(null=True, blank=True)
    # NULL until embedded (on commit for API writes, synchronously in the novelty gate).
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    # sha256 of the normalised body: the exact-duplicate fingerprint of the novelty gate and
    # of the diversity selector's stage 2. The vector itself is computed from title + body.
    embedding_content_hash = models.CharField(max_length=64)
    embedded_at = models.DateTimeField(null=True, blank=True)
    # The fingerprint of the model that made `embedding` ("" without one): as on Memory.
    embedding_model = models.CharField(max_length=16, blank=True, default="", db_default="")
    # Stored, generated by Postgres from title (weight A) and body (weight B), so it can never
    # drift from the text and needs no trigger.
    search_vector = models.GeneratedField(
        expression=SearchVector("title", weight="A", config=TEXT_SEARCH_CONFIG)
        + SearchVector("body", weight="B", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    # A curator (user or orchestrator key) wrote, edited or published it: only such an
    # article can be the curated answer (title / ``alias:`` pinning). An agent's edit clears it.
    curated = models.BooleanField(default=False)
    # Optimistic concurrency: a PATCH names the version it read; every write increments it.
    version = models.PositiveIntegerField(default=1)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("title", "id")
        constraints = (
            # Titles are unique (case-insensitive, archived articles release theirs) within
            # the namespaces a caller can see, never across them, so a clash can never tell an
            # agent that an article it cannot see exists: the shared namespace (published,
            # tenant-visible: everyone sees it) and each owner's own articles.
            models.UniqueConstraint(
                F("tenant"),
                Lower("title"),
                condition=Q(status=ArticleStatus.PUBLISHED, visibility=ArticleVisibility.TENANT),
                name="knowledge_article_shared_title_uniq",
            ),
            models.UniqueConstraint(
                F("tenant"),
                F("owner_agent_id"),
                Lower("title"),
                condition=~Q(status=ArticleStatus.ARCHIVED),
                name="knowledge_article_owner_title_uniq",
            ),
            models.CheckConstraint(
                condition=Q(category__in=ArticleCategory.values),
                name="knowledge_article_category_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ArticleStatus.values),
                name="knowledge_article_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(visibility__in=ArticleVisibility.values),
                name="knowledge_article_visibility_valid",
            ),
            models.CheckConstraint(
                condition=Q(source__in=ArticleSource.values),
                name="knowledge_article_source_valid",
            ),
            # An owner-visible article nobody owns would be visible to no agent at all.
            models.CheckConstraint(
                condition=~Q(visibility=ArticleVisibility.OWNER) | ~Q(owner_agent_id=""),
                name="knowledge_article_owner_required",
            ),
            models.CheckConstraint(
                condition=~Q(title=""), name="knowledge_article_title_not_blank"
            ),
            models.CheckConstraint(condition=~Q(body=""), name="knowledge_article_body_not_blank"),
            models.CheckConstraint(
                condition=Q(version__gte=1), name="knowledge_article_version_positive"
            ),
            models.CheckConstraint(
                condition=~Q(status=ArticleStatus.PUBLISHED) | Q(published_at__isnull=False),
                name="knowledge_article_published_at",
            ),
        )
        indexes = (
            GinIndex(fields=["search_vector"], name="knowledge_article_fts_idx"),
            GinIndex(fields=["tags"], name="knowledge_article_tags_idx"),
            # The gate's exact-duplicate lookup.
            models.Index(
                fields=["tenant", "embedding_content_hash"], name="knowledge_article_hash_idx"
            ),
            models.Index(fields=["tenant", "status", "title"], name="knowledge_article_list_idx"),
            # The partial HNSW index over published embeddings is built CONCURRENTLY by
            # migration 0003 (raw SQL: the ORM cannot build an index concurrently in Meta).
            # The article quotas' counts are kept by triggers (migration 0006).
        )

    @override
    def __str__(self) -> str:
        return self.title


class ArticleLink(TenantScopedModel):
    """A directed, typed edge between two articles of one tenant."""

    # Both constrained by (tenant_id, …) -> knowledge_article (tenant_id, id), as Article.project.
    from_article = models.ForeignKey(
        Article, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    to_article = models.ForeignKey(
        Article, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    kind = models.CharField(max_length=32, choices=LinkKind.choices)

    class Meta:
        constraints = (
            models.UniqueConstraint(
                fields=["tenant", "from_article", "to_article", "kind"], name="knowledge_link_uniq"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=LinkKind.values), name="knowledge_link_kind_valid"
            ),
            models.CheckConstraint(
                condition=~Q(from_article=F("to_article")), name="knowledge_link_not_self"
            ),
        )
        indexes = (models.Index(fields=["tenant", "to_article"], name="knowledge_link_to_idx"),)


class ArticleAccessEvent(TenantScopedModel):
    """One observation (surfaced, opened) or client assertion (referenced) about an article.

    ``search_id`` is the search that surfaced the article; on a ``referenced`` row it is the
    search the client says it used the article from (the spec's ``origin_search_id``); on an
    ``opened`` row it is the search the client opened it from, when the client said so.
    """

    id = models.BigAutoField(primary_key=True)
    # Constrained by (tenant_id, article_id) -> knowledge_article (tenant_id, id).
    article = models.ForeignKey(
        Article, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    access_type = models.CharField(max_length=16, choices=AccessType.choices)
    search_id = models.UUIDField(null=True, blank=True)
    # Audit stamps, not relations: events outlive the keys that caused them.
    api_key_id = models.UUIDField(null=True, blank=True)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX_LENGTH, blank=True, default="")

    class Meta:
        constraints = (
            models.CheckConstraint(
                condition=Q(access_type__in=AccessType.values),
                name="knowledge_access_type_valid",
            ),
        )
        indexes = (
            # record_referenced: "was this article surfaced under this search?"
            models.Index(
                fields=["tenant", "search_id", "access_type"], name="knowledge_access_search_idx"
            ),
            # Retrieval metrics over a time window.
            models.Index(
                fields=["tenant", "access_type", "created_at"], name="knowledge_access_window_idx"
            ),
        )
