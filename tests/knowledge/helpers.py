"""Write articles through the services (and embed them at once), and snapshot the tables."""

from __future__ import annotations

from typing import Any

from apps.knowledge.models import Article, ArticleAccessEvent, ArticleLink
from apps.knowledge.services import article_create, article_embed_pending
from apps.knowledge.viewer import Viewer
from apps.tenancy.models import ApiKeyRole

CURATOR = Viewer(role=ApiKeyRole.USER, subject_id="helper-curator")
BASE = "/api/v1/knowledge"


def publish(
    tenant, title: str, body: str | None = None, *, embed: bool = True, **fields: Any
) -> Article:
    """Create an article as a curator (published unless ``status`` says otherwise)."""
    fields.setdefault("category", "finding")
    proposal = article_create(
        tenant=tenant, viewer=CURATOR, title=title, body=body or f"{title}.", **fields
    )
    assert proposal.created, proposal.verdict
    if embed:
        article_embed_pending(article_ids=[str(proposal.article.pk)])
    proposal.article.refresh_from_db()
    return proposal.article


def break_embeddings(tenant) -> None:
    """Point the tenant at an endpoint that refuses connections: a real provider outage."""
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


def table_rows() -> dict[str, list[tuple[Any, ...]]]:
    """Every knowledge row that matters: compare before/after to prove nothing was written."""
    return {
        "articles": list(
            Article.objects.order_by("id").values_list(
                "id", "title", "body", "status", "version", "embedding_content_hash", "embedded_at"
            )
        ),
        "links": list(
            ArticleLink.objects.order_by("id").values_list(
                "from_article_id", "to_article_id", "kind"
            )
        ),
        "events": list(
            ArticleAccessEvent.objects.order_by("id").values_list(
                "article_id", "access_type", "search_id"
            )
        ),
    }


def error(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def article_url(article_id: object) -> str:
    return f"{BASE}/articles/{article_id}"
