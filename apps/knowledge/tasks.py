"""Thin Celery wrappers (STYLE rule 11): take ids, call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

MAX_EMBEDDING_RETRIES = 10


@shared_task(
    name="knowledge.embed_articles",
    bind=True,
    ignore_result=True,
    acks_late=True,
    max_retries=MAX_EMBEDDING_RETRIES,
)
def embed_articles_task(self: Any, article_ids: list[str]) -> None:
    from apps.knowledge.services import article_embed_pending

    run = article_embed_pending(article_ids=article_ids)
    if run.unavailable and self.request.retries < MAX_EMBEDDING_RETRIES:
        # Snooze: the provider is down. Rows stay pending; the beat backfill is the safety net
        # once every retry is spent.
        raise self.retry(countdown=settings.EMBEDDING_RETRY_COUNTDOWN_SECONDS)


@shared_task(name="knowledge.backfill_embeddings", ignore_result=True, acks_late=True)
def backfill_article_embeddings_task() -> None:
    from apps.knowledge.services import article_backfill_embeddings

    article_backfill_embeddings()
