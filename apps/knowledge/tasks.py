"""Thin Celery wrappers (STYLE rule 11): take ids, call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from apps.core.embedding_retries import MAX_EMBEDDING_RETRIES, snooze_while_unavailable


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
    snooze_while_unavailable(self, unavailable=bool(run.unavailable))


@shared_task(name="knowledge.backfill_embeddings", ignore_result=True, acks_late=True)
def backfill_article_embeddings_task() -> None:
    from apps.knowledge.services import article_backfill_embeddings

    article_backfill_embeddings()
