"""Curating articles: direct creation, optimistic-concurrency edits, publish, archive."""

from __future__ import annotations

import uuid

import pytest

from apps.core.exceptions import PermissionDenied
from apps.knowledge.exceptions import (
    ArticleArchived,
    ArticleNotFound,
    InvalidArticle,
    NotArticleOwner,
    TitleTaken,
    VersionConflict,
)
from apps.knowledge.models import Article
from apps.knowledge.services import (
    ArticleChanges,
    article_archive,
    article_create,
    article_publish,
    article_update,
)
from tests.knowledge.helpers import publish, table_rows

pytestmark = pytest.mark.django_db


def test_a_curator_creates_with_the_chosen_status_and_the_vector_follows_on_commit(
    tenant, curator, mocker, django_capture_on_commit_callbacks
):
    # given
    delay = mocker.patch("apps.knowledge.queue.EMBED_ARTICLES.delay")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        proposal = article_create(
            tenant=tenant,
            viewer=curator,
            title="Rate limits per API key",
            body="Each API key may make 600 requests per minute.",
            category="reference",
            status="draft",
        )

    # then
    article = Article.objects.get(pk=proposal.article.pk)
    assert (proposal.verdict, proposal.created) == ("created", True)
    assert (article.status, article.published_at, article.embedding) == ("draft", None, None)
    assert article.source == "manual"
    delay.assert_called_once_with([str(article.pk)])


def test_a_curator_create_is_deduplicated_by_exact_content_only(tenant, curator):
    # given
    canonical = publish(tenant, "Rate limits", "Each API key may make 600 requests per minute.")
    before = table_rows()

    # when
    same = article_create(
        tenant=tenant,
        viewer=curator,
        title="Limits",
        body="Each API key may make 600 requests  per minute.",
        category="reference",
    )
    similar = article_create(
        tenant=tenant,
        viewer=curator,
        title="Limits, reworded",
        body="Each API key may make 600 requests per minute!",
        category="reference",
    )

    # then: the whitespace variant is the same content; the reworded one is new
    assert (same.verdict, same.article.pk) == ("duplicate", canonical.pk)
    assert (similar.verdict, similar.created) == ("created", True)
    assert len(table_rows()["articles"]) == len(before["articles"]) + 1


def test_owner_visibility_needs_an_owner(tenant, curator):
    # when / then
    with pytest.raises(InvalidArticle) as raised:
        article_create(
            tenant=tenant,
            viewer=curator,
            title="Private",
            body="Body.",
            category="finding",
            visibility="owner",
        )
    assert raised.value.details == {"field": "owner_agent_id"}
    assert Article.objects.count() == 0


def test_an_edit_with_the_current_version_applies_and_bumps_it(
    tenant, curator, mocker, django_capture_on_commit_callbacks
):
    # given
    article = publish(tenant, "Retry policy", "Retry three times.")
    delay = mocker.patch("apps.knowledge.queue.EMBED_ARTICLES.delay")

    # when
    with django_capture_on_commit_callbacks(execute=True):
        updated = article_update(
            tenant=tenant,
            viewer=curator,
            article_id=article.pk,
            version=1,
            changes=ArticleChanges(body="Retry at most three times with jitter.", tags=["http"]),
        )

    # then: a changed body clears the stale vector and re-embeds it
    stored = Article.objects.get(pk=article.pk)
    assert stored.version == 2
    assert stored.body == "Retry at most three times with jitter."
    assert stored.tags == ["http"]
    assert (stored.embedding, stored.embedded_at) == (None, None)
    assert stored.embedding_content_hash != article.embedding_content_hash
    assert updated.version == 2
    delay.assert_called_once_with([str(article.pk)])


def test_a_tags_only_edit_keeps_the_vector(tenant, curator):
    # given
    article = publish(tenant, "Retry policy", "Retry three times.")

    # when
    article_update(
        tenant=tenant,
        viewer=curator,
        article_id=article.pk,
        version=1,
        changes=ArticleChanges(tags=["http"], category="pattern"),
    )

    # then
    stored = Article.objects.get(pk=article.pk)
    assert stored.embedded_at == article.embedded_at
    assert stored.embedding is not None
    assert (stored.category, stored.version) == ("pattern", 2)


def test_a_stale_version_is_a_conflict_and_changes_nothing(tenant, curator):
    # given: someone else edited after we read version 1
    article = publish(tenant, "Retry policy", "Retry three times.")
    article_update(
        tenant=tenant,
        viewer=curator,
        article_id=article.pk,
        version=1,
        changes=ArticleChanges(title="Retry policy (HTTP)"),
    )
    before = table_rows()

    # when
    with pytest.raises(VersionConflict) as raised:
        article_update(
            tenant=tenant,
            viewer=curator,
            article_id=article.pk,
            version=1,
            changes=ArticleChanges(body="Retry forever."),
        )

    # then
    assert raised.value.http_status == 409
    assert raised.value.code == "version_conflict"
    assert raised.value.details == {"current_version": 2, "your_version": 1}
    assert table_rows() == before


def test_an_agent_edits_its_own_article_but_not_anothers(tenant, agent_viewer):
    # given
    own = publish(tenant, "Mine", owner_agent_id="agent-a")
    shared = publish(tenant, "Shared")

    # when
    article_update(
        tenant=tenant,
        viewer=agent_viewer,
        article_id=own.pk,
        version=1,
        changes=ArticleChanges(owner_agent_id="agent-b", visibility="owner"),
    )
    with pytest.raises(NotArticleOwner) as raised:
        article_update(
            tenant=tenant,
            viewer=agent_viewer,
            article_id=shared.pk,
            version=1,
            changes=ArticleChanges(body="Vandalised."),
        )

    # then: an agent cannot hand its article to another owner either
    stored = Article.objects.get(pk=own.pk)
    assert (stored.owner_agent_id, stored.visibility) == ("agent-a", "owner")
    assert raised.value.http_status == 403
    assert Article.objects.get(pk=shared.pk).body == "Shared."


def test_an_agent_editing_an_invisible_article_gets_not_found(tenant, agent_viewer):
    # given
    private = publish(tenant, "Theirs", visibility="owner", owner_agent_id="agent-b")
    before = table_rows()

    # when / then
    with pytest.raises(ArticleNotFound):
        article_update(
            tenant=tenant,
            viewer=agent_viewer,
            article_id=private.pk,
            version=1,
            changes=ArticleChanges(body="Hello."),
        )
    assert table_rows() == before


def test_renaming_onto_a_taken_title_is_a_conflict(tenant, curator):
    # given
    publish(tenant, "Taken")
    article = publish(tenant, "Free")
    before = table_rows()

    # when / then
    with pytest.raises(TitleTaken):
        article_update(
            tenant=tenant,
            viewer=curator,
            article_id=article.pk,
            version=1,
            changes=ArticleChanges(title="taken"),
        )
    assert table_rows() == before


def test_publishing_a_draft_stamps_it_and_is_idempotent(tenant, curator):
    # given
    draft = publish(tenant, "Draft", status="draft")

    # when
    first = article_publish(tenant=tenant, viewer=curator, article_id=draft.pk)
    second = article_publish(tenant=tenant, viewer=curator, article_id=draft.pk)

    # then
    assert (first.status, first.version) == ("published", 2)
    assert first.published_at is not None
    assert (second.version, second.published_at) == (2, first.published_at)


def test_an_agent_cannot_publish(tenant, agent_viewer):
    # given
    draft = publish(tenant, "Draft", status="draft", owner_agent_id="agent-a")
    before = table_rows()

    # when / then
    with pytest.raises(PermissionDenied):
        article_publish(tenant=tenant, viewer=agent_viewer, article_id=draft.pk)
    assert table_rows() == before


def test_archiving_hides_the_article_frees_its_title_and_blocks_edits(tenant, curator):
    # given
    article = publish(tenant, "Old decision")

    # when
    archived = article_archive(tenant=tenant, viewer=curator, article_id=article.pk)
    again = article_archive(tenant=tenant, viewer=curator, article_id=article.pk)
    replacement = publish(tenant, "Old decision", "A new body.")

    # then
    assert (archived.status, archived.version, again.version) == ("archived", 2, 2)
    assert replacement.title == "Old decision"
    with pytest.raises(ArticleArchived):
        article_update(
            tenant=tenant,
            viewer=curator,
            article_id=article.pk,
            version=2,
            changes=ArticleChanges(body="Revived?"),
        )
    with pytest.raises(ArticleArchived):
        article_publish(tenant=tenant, viewer=curator, article_id=article.pk)


def test_an_agent_archives_only_its_own_articles(tenant, agent_viewer):
    # given
    own = publish(tenant, "Mine", owner_agent_id="agent-a")
    shared = publish(tenant, "Shared")

    # when
    article_archive(tenant=tenant, viewer=agent_viewer, article_id=own.pk)
    with pytest.raises(NotArticleOwner):
        article_archive(tenant=tenant, viewer=agent_viewer, article_id=shared.pk)

    # then
    assert Article.objects.get(pk=own.pk).status == "archived"
    assert Article.objects.get(pk=shared.pk).status == "published"


def test_an_unknown_article_is_not_found(tenant, curator):
    with pytest.raises(ArticleNotFound):
        article_archive(tenant=tenant, viewer=curator, article_id=uuid.uuid4())
