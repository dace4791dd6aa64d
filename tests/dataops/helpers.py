"""Shared by the operator-command tests: run a command, snapshot a tenant, build a corpus."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.utils import timezone

from apps.dataops.models import ReembedRun
from apps.knowledge.models import Article, ArticleAccessEvent, ArticleLink
from apps.knowledge.services import article_archive, article_link_create
from apps.memory.models import Memory, PromotionJob, SessionMemory, SessionPromotion
from apps.memory.services import (
    MemoryDraft,
    SessionTurnDraft,
    memory_flag_conflict,
    memory_supersede,
    session_append_many,
)
from apps.projects.models import Project
from tests.knowledge.helpers import CURATOR, publish
from tests.memory.helpers import remember

MEMORY_FIELDS = (
    "id",
    "tenant_id",
    "subject_id",
    "text",
    "context",
    "embedding_content_hash",
    "embedded_at",
    "confidence",
    "source",
    "source_session_id",
    "compiler",
    "occurred_at",
    "valid_from",
    "valid_to",
    "tags",
    "metadata",
    "project_id",
    "superseded_by_id",
    "superseded_at",
    "supersedes",
    "supersede_reason",
    "conflicts_with",
    "recall_count",
    "last_recalled_at",
    "graduated_at",
    "graduated_article_id",
    "graduated_global",
    "created_at",
    "updated_at",
)
TURN_FIELDS = (
    "tenant_id",
    "subject_id",
    "session_id",
    "role",
    "content",
    "metadata",
    "expires_at",
    "occurred_at",
    "created_at",
    "updated_at",
)
WATERMARK_FIELDS = (
    "tenant_id",
    "subject_id",
    "session_id",
    "content_hash",
    "promoted_count",
    "created_at",
    "updated_at",
)
ARTICLE_FIELDS = (
    "id",
    "tenant_id",
    "project_id",
    "title",
    "body",
    "category",
    "tags",
    "status",
    "visibility",
    "owner_agent_id",
    "source",
    "source_memory_id",
    "embedding_content_hash",
    "embedded_at",
    "version",
    "published_at",
    "created_at",
    "updated_at",
)
LINK_FIELDS = ("tenant_id", "from_article_id", "to_article_id", "kind", "created_at", "updated_at")


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_json(*args: str) -> Any:
    return json.loads(run(*args, "--json"))


def _vectors(queryset: Any) -> dict[Any, list[float] | None]:
    return {
        pk: (None if vector is None else [float(v) for v in vector])
        for pk, vector in queryset.values_list("pk", "embedding")
    }


def tenant_rows(tenant) -> dict[str, Any]:
    """Every exportable row of ``tenant``, field by field (turns in seq order, without seq)."""
    return {
        "memories": list(
            Memory.objects.filter(tenant=tenant).order_by("id").values_list(*MEMORY_FIELDS)
        ),
        "memory_vectors": _vectors(Memory.objects.filter(tenant=tenant)),
        "turns": list(
            SessionMemory.objects.filter(tenant=tenant).order_by("seq").values_list(*TURN_FIELDS)
        ),
        "watermarks": list(
            SessionPromotion.objects.filter(tenant=tenant)
            .order_by("subject_id", "session_id")
            .values_list(*WATERMARK_FIELDS)
        ),
        "articles": list(
            Article.objects.filter(tenant=tenant).order_by("id").values_list(*ARTICLE_FIELDS)
        ),
        "article_vectors": _vectors(Article.objects.filter(tenant=tenant)),
        "links": sorted(ArticleLink.objects.filter(tenant=tenant).values_list(*LINK_FIELDS)),
    }


def table_counts() -> dict[str, int]:
    """Row counts of every table an import or reembed could write, across all tenants."""
    return {
        model.__name__: model.objects.count()
        for model in (
            Memory,
            SessionMemory,
            SessionPromotion,
            PromotionJob,
            ReembedRun,
            Article,
            ArticleLink,
            ArticleAccessEvent,
            Project,
        )
    }


def wipe(tenant) -> None:
    """Delete the tenant's memories, sessions and knowledge (projects stay)."""
    Memory.objects.filter(tenant=tenant).delete()
    SessionMemory.objects.filter(tenant=tenant).delete()
    SessionPromotion.objects.filter(tenant=tenant).delete()
    ArticleLink.objects.filter(tenant=tenant).delete()
    Article.objects.filter(tenant=tenant).delete()


def build_corpus(tenant, project: Project) -> dict[str, Any]:
    """A tenant exercising every exported field: projects, tags, metadata, a supersede chain,
    a graduated memory, a pending vector, recall stamps, interleaved sessions, an expired
    turn, a watermark, articles of every status and links between them."""
    now = timezone.now()
    guide = publish(tenant, "Deploy guide", "Deploys run from main.", tags=["deploy"])
    draft = publish(
        tenant,
        "Agent notes",
        "Private notes.",
        status="draft",
        visibility="owner",
        owner_agent_id="agent-a",
        project_id=project.pk,
    )
    graduated = publish(
        tenant,
        "Prefers tabs",
        "The user prefers tabs.",
        visibility="owner",
        owner_agent_id="agent-a",
        source="graduated",
    )
    retired = publish(tenant, "Old process", "Deploys ran on Fridays.")
    article_archive(tenant=tenant, viewer=CURATOR, article_id=retired.pk)
    article_link_create(
        tenant=tenant,
        viewer=CURATOR,
        from_article_id=guide.pk,
        to_article_id=draft.pk,
        kind="relates_to",
    )
    article_link_create(
        tenant=tenant,
        viewer=CURATOR,
        from_article_id=draft.pk,
        to_article_id=guide.pk,
        kind="potential_conflict",
    )

    first = remember(
        tenant,
        "agent-a",
        "The build uses Bazel.",
        tags=["build", "tools"],
        metadata={"kind": "fact", "nested": {"n": 1}},
        project_id=project.pk,
        confidence=0.7,
    )
    old = remember(
        tenant, "agent-a", "Deploys are on Fridays.", source="promoted", source_session_id="s1"
    )
    new = memory_supersede(
        tenant=tenant,
        subject_id="agent-a",
        memory_id=old.pk,
        draft=MemoryDraft(text="Deploys are on Thursdays.", source="promoted"),
    )
    Memory.objects.filter(pk=new.pk).update(embedding=[0.5] * 384, embedded_at=now)
    hot = remember(
        tenant, "agent-a", "The user prefers tabs.", context="2023-05-08 · editor settings"
    )
    # Not a real conflict: any two live rows of one subject carry conflicts_with for the test.
    memory_flag_conflict(tenant=tenant, subject_id="agent-a", first=first, second=hot)
    Memory.objects.filter(pk=hot.pk).update(
        recall_count=4,
        last_recalled_at=now - timedelta(minutes=5),
        graduated_at=now - timedelta(minutes=1),
        graduated_article=graduated,
        graduated_global=True,
    )
    pending = remember(tenant, "agent-b", "Pending vector.", embed=False)

    turns = session_append_many(
        tenant=tenant,
        subject_id="agent-a",
        drafts=[
            SessionTurnDraft(
                session_id="s1",
                content="hello",
                ttl_seconds=3600,
                occurred_at=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
            ),
            SessionTurnDraft(session_id="s2", content="other session", ttl_seconds=3600),
            SessionTurnDraft(
                session_id="s1",
                content="hi there",
                role="assistant",
                metadata={"recalled_context": True},
                ttl_seconds=3600,
            ),
            SessionTurnDraft(session_id="s1", content="hello", ttl_seconds=3600),
        ],
    )
    expired = session_append_many(
        tenant=tenant,
        subject_id="agent-b",
        drafts=[SessionTurnDraft(session_id="s9", content="gone soon", ttl_seconds=3600)],
    )[0]
    SessionMemory.objects.filter(seq=expired.seq).update(expires_at=now - timedelta(seconds=1))
    # Promotion provenance on the superseded promoted row: compiled from s1's first turn.
    Memory.objects.filter(pk=old.pk).update(
        source_turn_seqs=[turns[0].seq],
        compiler="heuristic",
        occurred_at=datetime(2023, 5, 7, tzinfo=UTC),
    )
    SessionPromotion.objects.create(
        tenant=tenant,
        subject_id="agent-a",
        session_id="s1",
        content_hash="f" * 64,
        promoted_count=2,
    )
    return {
        "articles": [guide, draft, graduated, retired],
        "memories": [first, old, new, hot, pending],
        "expired_turn": expired,
    }
