"""Filling in article vectors: the on-commit task, the backfill, and the stale-vector guard."""

from __future__ import annotations

import pytest

from apps.knowledge.models import Article
from apps.knowledge.services import (
    ArticleChanges,
    article_backfill_embeddings,
    article_embed_pending,
    article_update,
)
from apps.knowledge.tasks import backfill_article_embeddings_task, embed_articles_task
from apps.providers.embeddings import embed_texts
from tests.knowledge.helpers import break_embeddings, publish

pytestmark = pytest.mark.django_db


def test_pending_articles_are_embedded_once(tenant):
    # given
    article = publish(tenant, "Retry policy", "Retry three times.", embed=False)

    # when
    first = article_embed_pending(article_ids=[str(article.pk)])
    second = article_embed_pending(article_ids=[str(article.pk)])

    # then
    stored = Article.objects.get(pk=article.pk)
    assert (first.embedded, second.embedded) == (1, 0)
    assert stored.embedding is not None
    assert stored.embedded_at is not None


def test_a_vector_computed_before_an_edit_is_discarded(tenant, curator, mocker):
    # given: the article is edited to version 2 while the provider embeds version 1
    article = publish(tenant, "Retry policy", "Retry three times.", embed=False)

    def embed_then_edit(config, texts):
        vectors = embed_texts(config, texts)
        article_update(
            tenant=tenant,
            viewer=curator,
            article_id=article.pk,
            version=1,
            changes=ArticleChanges(body="Retry twice."),
        )
        return vectors

    mocker.patch("apps.knowledge.services.embedding.embed_texts", side_effect=embed_then_edit)

    # when
    run = article_embed_pending(article_ids=[str(article.pk)])

    # then: the stale vector is not stored; the edit's own task embeds version 2
    assert run.embedded == 0
    stored = Article.objects.get(pk=article.pk)
    assert (stored.version, stored.embedding) == (2, None)


def test_an_outage_leaves_articles_pending_and_the_task_retries(tenant, mocker):
    # given
    article = publish(tenant, "Retry policy", "Retry three times.", embed=False)
    break_embeddings(tenant)
    retry = mocker.patch.object(embed_articles_task, "retry", side_effect=RuntimeError("retry"))

    # when
    with pytest.raises(RuntimeError, match="retry"):
        embed_articles_task.run([str(article.pk)])

    # then
    assert Article.objects.get(pk=article.pk).embedding is None
    assert retry.call_count == 1


def test_the_backfill_embeds_what_the_task_missed_but_not_archived_articles(tenant):
    # given
    pending = publish(tenant, "Pending", embed=False)
    archived = publish(tenant, "Archived", status="archived", embed=False)

    # when
    backfill_article_embeddings_task.run()
    again = article_backfill_embeddings()

    # then
    assert Article.objects.get(pk=pending.pk).embedding is not None
    assert Article.objects.get(pk=archived.pk).embedding is None
    assert again.embedded == 0
