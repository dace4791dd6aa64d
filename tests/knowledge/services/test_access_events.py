"""Access events and the retrieval funnel: referenced is bounded, metrics count distinct pairs."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.knowledge.exceptions import (
    InvalidArticleIds,
    InvalidSearchId,
    NotSurfaced,
    TooManyArticleIds,
)
from apps.knowledge.models import ArticleAccessEvent
from apps.knowledge.selectors import knowledge_retrieval_metrics, knowledge_search
from apps.knowledge.services import (
    knowledge_search_record,
    record_opened,
    record_referenced,
    record_surfaced,
)
from apps.knowledge.viewer import Viewer
from tests.knowledge.helpers import publish, table_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def surfaced(tenant, agent_viewer):
    """Three articles, two of them surfaced by one search."""
    articles = [publish(tenant, title) for title in ("Alpha", "Beta", "Gamma")]
    search_id = uuid.uuid4()
    record_surfaced(
        tenant=tenant,
        viewer=agent_viewer,
        api_key_id=None,
        search_id=search_id,
        article_ids=[articles[0].pk, articles[1].pk],
    )
    return search_id, articles


def test_referencing_surfaced_articles_records_one_row_each(tenant, agent_viewer, surfaced):
    # given
    search_id, articles = surfaced
    key_id = uuid.uuid4()

    # when
    written = record_referenced(
        tenant=tenant,
        viewer=agent_viewer,
        api_key_id=key_id,
        search_id=str(search_id),
        article_ids=[str(articles[0].pk), articles[1].pk, articles[0].pk],
    )

    # then
    rows = list(
        ArticleAccessEvent.objects.filter(access_type="referenced")
        .order_by("id")
        .values_list("article_id", "search_id", "api_key_id", "subject_id")
    )
    assert written == 2
    assert rows == [
        (articles[0].pk, search_id, key_id, "agent-a"),
        (articles[1].pk, search_id, key_id, "agent-a"),
    ]


def test_one_unsurfaced_id_fails_the_whole_call_and_writes_nothing(tenant, agent_viewer, surfaced):
    # given
    search_id, articles = surfaced
    before = table_rows()

    # when
    with pytest.raises(NotSurfaced) as raised:
        record_referenced(
            tenant=tenant,
            viewer=agent_viewer,
            api_key_id=None,
            search_id=search_id,
            article_ids=[articles[0].pk, articles[2].pk],
        )

    # then
    assert raised.value.http_status == 422
    assert raised.value.code == "not_surfaced"
    assert raised.value.details == {"article_ids": [str(articles[2].pk)]}
    assert table_rows() == before


def test_a_foreign_or_unknown_search_id_surfaced_nothing(
    tenant, other_tenant, agent_viewer, surfaced
):
    # given
    search_id, articles = surfaced
    before = table_rows()

    # when / then: the other tenant cannot use our search id, and an unknown one is the same
    for target_tenant, target_search in ((other_tenant, search_id), (tenant, uuid.uuid4())):
        with pytest.raises(NotSurfaced):
            record_referenced(
                tenant=target_tenant,
                viewer=agent_viewer,
                api_key_id=None,
                search_id=target_search,
                article_ids=[articles[0].pk],
            )
    assert table_rows() == before


@pytest.mark.parametrize(
    ("_case", "search_id", "article_ids", "error", "code"),
    [
        (
            "bad_search_id",
            "nope",
            ["00000000-0000-0000-0000-000000000001"],
            InvalidSearchId,
            "invalid_search_id",
        ),
        ("empty", None, [], InvalidArticleIds, "invalid_article_ids"),
        ("not_a_list", None, "abc", InvalidArticleIds, "invalid_article_ids"),
        ("malformed_id", None, ["not-a-uuid"], InvalidArticleIds, "invalid_article_ids"),
        (
            "too_many",
            None,
            [str(uuid.uuid4()) for _ in range(51)],
            TooManyArticleIds,
            "too_many_article_ids",
        ),
    ],
)
def test_malformed_referenced_calls_are_422_and_write_nothing(
    tenant, agent_viewer, surfaced, _case, search_id, article_ids, error, code
):
    # given
    before = table_rows()

    # when
    with pytest.raises(error) as raised:
        record_referenced(
            tenant=tenant,
            viewer=agent_viewer,
            api_key_id=None,
            search_id=search_id or surfaced[0],
            article_ids=article_ids,
        )

    # then
    assert (raised.value.http_status, raised.value.code) == (422, code)
    assert table_rows() == before


def test_metrics_count_distinct_pairs_and_ignore_repeats(tenant, agent_viewer, surfaced):
    # given: two surfaced pairs; the same reference posted twice; one article opened twice
    search_id, articles = surfaced
    for _ in range(2):
        record_referenced(
            tenant=tenant,
            viewer=agent_viewer,
            api_key_id=None,
            search_id=search_id,
            article_ids=[articles[0].pk],
        )
        record_opened(
            tenant=tenant,
            viewer=agent_viewer,
            api_key_id=None,
            article_id=articles[1].pk,
            search_id=search_id,
        )
    # an open no search led to is recorded, and is no step of the funnel
    record_opened(tenant=tenant, viewer=agent_viewer, api_key_id=None, article_id=articles[2].pk)

    # when
    metrics = knowledge_retrieval_metrics(tenant=tenant, window="24h")

    # then
    assert ArticleAccessEvent.objects.filter(access_type="referenced").count() == 2
    assert ArticleAccessEvent.objects.filter(access_type="opened").count() == 3
    assert (metrics.surfaced, metrics.opened, metrics.referenced) == (2, 1, 1)
    assert (metrics.reference_rate, metrics.open_rate) == (0.5, 0.5)


@pytest.mark.parametrize(
    ("_case", "search", "subject", "article"),
    [
        ("a made-up search id", "made-up", "agent-a", 0),
        ("another subject's search", "real", "agent-b", 0),
        ("an article the search did not surface", "real", "agent-a", 2),
    ],
)
def test_an_open_attributed_to_a_search_not_the_callers_is_refused_and_recorded_nowhere(
    tenant, surfaced, _case, search, subject, article
):
    # given
    search_id, articles = surfaced
    before = table_rows()

    # when
    with pytest.raises(NotSurfaced) as raised:
        record_opened(
            tenant=tenant,
            viewer=Viewer.for_subject(subject),
            api_key_id=None,
            article_id=articles[article].pk,
            search_id=search_id if search == "real" else uuid.uuid4(),
        )

    # then
    assert (raised.value.http_status, raised.value.code) == (422, "not_surfaced")
    assert table_rows() == before
    assert knowledge_retrieval_metrics(tenant=tenant, window="24h").open_rate == 0.0


def test_metrics_only_count_the_window_and_the_tenant(tenant, other_tenant, agent_viewer, surfaced):
    # given: an old event, and another tenant's search
    ArticleAccessEvent.objects.filter(tenant=tenant).update(
        created_at=timezone.now() - timedelta(days=8)
    )
    theirs = publish(other_tenant, "Theirs")
    record_surfaced(
        tenant=other_tenant,
        viewer=agent_viewer,
        api_key_id=None,
        search_id=uuid.uuid4(),
        article_ids=[theirs.pk],
    )

    # when
    week = knowledge_retrieval_metrics(tenant=tenant, window="7d")
    month = knowledge_retrieval_metrics(tenant=tenant, window="30d")

    # then
    assert (week.surfaced, week.reference_rate) == (0, 0.0)
    assert month.surfaced == 2


def test_a_search_surfaces_its_results_under_its_own_id_which_referenced_then_accepts(
    tenant, agent_viewer
):
    # given
    article = publish(tenant, "Friday deploy freeze", "We do not deploy on Fridays.")

    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="friday deploys")
    knowledge_search_record(tenant=tenant, viewer=agent_viewer, api_key_id=None, result=result)
    written = record_referenced(
        tenant=tenant,
        viewer=agent_viewer,
        api_key_id=None,
        search_id=result.search_id,
        article_ids=[article.pk],
    )

    # then
    assert written == 1
    assert list(
        ArticleAccessEvent.objects.order_by("id").values_list("access_type", "search_id")
    ) == [("surfaced", result.search_id), ("referenced", result.search_id)]
