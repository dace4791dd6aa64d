"""Hybrid search: the legs, the fusion, every selection_reason, degradation and diversity."""

from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
import pytest

from apps.core.queries import InvalidQuery, QueryTooLong
from apps.knowledge.diversity import DiversityOptions
from apps.knowledge.exceptions import InvalidSessionId
from apps.knowledge.models import Article, ArticleAccessEvent
from apps.knowledge.selectors import knowledge_search, snippet_for
from apps.knowledge.services import knowledge_search_record
from apps.knowledge.viewer import Viewer
from tests.knowledge.helpers import break_embeddings, publish
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def titles(result) -> list[str]:
    return [hit.article.title for hit in result.results]


def reasons(result) -> dict[str, str]:
    return {hit.article.title: hit.selection_reason for hit in result.results}


@pytest.fixture
def wiki(tenant):
    return {
        "freeze": publish(
            tenant,
            "Friday deploy freeze",
            "We do not deploy to production after 14:00 UTC on Fridays.",
            category="decision",
        ),
        "migrations": publish(
            tenant,
            "Database migrations run before the web deploy",
            "A release job applies schema migrations before new web containers start.",
            category="pattern",
        ),
        "redis": publish(
            tenant,
            "Redis is a cache",
            "Anything stored only in Redis may vanish on failover.",
            category="decision",
        ),
    }


def test_each_leg_is_named_in_the_selection_reason(tenant, wiki, agent_viewer):
    # given: an article that is not embedded yet can only be found by its words
    publish(tenant, "Deploy checklist", "Steps to follow for every deploy.", embed=False)

    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")

    # then
    assert reasons(result) == {
        "Friday deploy freeze": "keyword+semantic",
        "Database migrations run before the web deploy": "keyword+semantic",
        "Deploy checklist": "keyword",
        "Redis is a cache": "semantic",
    }
    assert result.meta["degraded"] is False
    assert result.meta["ann_iterative_scan"] == "off"
    assert result.meta["provenance"] == "retrieved"


def test_scores_are_fused_ranks_normalised_to_one(tenant, wiki, agent_viewer):
    # when
    result = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="friday deploy freeze fridays"
    )

    # then: first in both legs is 1.0; a semantic-only hit is at most one half
    top = result.results[0]
    assert (top.article.title, top.score, top.rank) == ("Friday deploy freeze", 1.0, 1)
    semantic_only = [hit for hit in result.results if hit.selection_reason == "semantic"]
    assert all(hit.score is not None and hit.score <= 0.5 for hit in semantic_only)
    assert result.meta["confidence"] == 1.0
    assert top.semantic_score is not None
    assert top.embedding_content_hash == wiki["freeze"].embedding_content_hash
    stored = Article.objects.get(pk=wiki["freeze"].pk).embedding
    assert top.embedding is not None
    assert np.array_equal(np.asarray(top.embedding), np.asarray(stored, dtype=np.float32))


def test_embeddings_down_falls_back_to_keywords_and_says_so(tenant, wiki, agent_viewer):
    # given
    break_embeddings(tenant)

    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy on fridays")

    # then
    assert titles(result) == [
        "Friday deploy freeze",
        "Database migrations run before the web deploy",
    ]
    assert set(reasons(result).values()) == {"keyword_fallback"}
    assert result.meta["degraded"] is True
    assert result.meta["degraded_reason"] == "provider_error"
    assert "ann_iterative_scan" not in result.meta
    assert result.results[0].semantic_score is None


def test_a_shed_heavy_read_degrades_to_keywords_too(tenant, wiki, agent_viewer, settings):
    # given: the tenant is over its heavy-read concurrency cap
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 0

    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="redis failover")

    # then
    assert titles(result) == ["Redis is a cache"]
    assert reasons(result) == {"Redis is a cache": "keyword_fallback"}
    assert (result.meta["degraded"], result.meta["degraded_reason"]) == (True, "heavy_read_shed")


def test_a_title_match_is_the_curated_answer_pinned_first(tenant, wiki, agent_viewer):
    # when: the migrations article would otherwise rank above it for "deploy"
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="Friday deploy freeze?")

    # then
    assert titles(result)[0] == "Friday deploy freeze"
    assert result.meta["provenance"] == "curated"
    assert result.meta["answer_confidence"] == "answer"


def test_an_alias_match_is_pinned_even_when_no_leg_retrieves_it(tenant, wiki, agent_viewer):
    # given: not embedded, and its alias's words are nowhere in its text
    publish(
        tenant,
        "Release calendar",
        "Releases go out on Tuesdays and Thursdays.",
        tags=["alias:Ship Window"],
        embed=False,
    )

    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="ship window")

    # then
    first = result.results[0]
    assert (first.article.title, first.selection_reason, first.score) == (
        "Release calendar",
        "unscored",
        None,
    )
    assert result.meta["provenance"] == "curated"


def test_a_title_match_is_pinned_before_any_alias_match(tenant, wiki, agent_viewer):
    # given: two curated articles carry the query as an alias, the later one published last
    publish(tenant, "Old calendar", "Releases went out on Mondays.", tags=["alias:Ship Window"])
    newer = publish(
        tenant, "Release calendar", "Releases go out on Tuesdays.", tags=["alias:Ship Window"]
    )

    # when / then: the most recently published alias is the answer
    assert (
        knowledge_search(tenant=tenant, viewer=agent_viewer, query="ship window")
        .results[0]
        .article.pk
        == newer.pk
    )

    # given: an article titled with the query, published before both
    titled = publish(tenant, "Ship window", "The ship window is Tuesday to Thursday.")
    Article.objects.filter(pk=titled.pk).update(published_at=newer.published_at - timedelta(days=1))

    # when / then: a title match wins over every alias
    assert (
        knowledge_search(tenant=tenant, viewer=agent_viewer, query="Ship window?")
        .results[0]
        .article.pk
        == titled.pk
    )


@pytest.mark.parametrize(
    ("_case", "query", "error", "code"),
    [
        ("number", 42, InvalidQuery, "invalid_query"),
        ("null", None, InvalidQuery, "invalid_query"),
        ("list", ["deploy"], InvalidQuery, "invalid_query"),
        ("blank", "  \n\t ", InvalidQuery, "invalid_query"),
        ("too_long", "x" * 501, QueryTooLong, "query_too_long"),
    ],
)
def test_a_bad_query_is_refused_before_anything_is_embedded(
    tenant, agent_viewer, mocker, _case, query, error, code
):
    # given
    spy = mocker.patch("apps.knowledge.selectors.search.embed_query_cached")

    # when
    with pytest.raises(error) as raised:
        knowledge_search(tenant=tenant, viewer=agent_viewer, query=query)

    # then
    assert (raised.value.http_status, raised.value.code) == (422, code)
    assert spy.call_count == 0
    assert ArticleAccessEvent.objects.count() == 0


def test_a_query_of_exactly_500_characters_is_accepted(tenant, wiki, agent_viewer):
    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy " + "x" * 493)

    # then
    assert result.meta["total_count"] == 3


@pytest.mark.parametrize(
    ("_case", "session_id"), [("number", 7), ("empty", ""), ("long", "é" * 101)]
)
def test_a_bad_session_id_is_refused(tenant, agent_viewer, _case, session_id):
    with pytest.raises(InvalidSessionId):
        knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy", session_id=session_id)


def test_the_search_itself_writes_nothing(tenant, wiki, agent_viewer):
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy", limit=2)

    assert result.results
    assert not ArticleAccessEvent.objects.exists()


def test_served_results_are_recorded_as_surfaced_under_the_search_id(tenant, wiki, agent_viewer):
    # given
    search_id = uuid.uuid4()
    key_id = uuid.uuid4()

    # when
    result = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="deploy", limit=2, search_id=search_id
    )
    knowledge_search_record(tenant=tenant, viewer=agent_viewer, api_key_id=key_id, result=result)
    knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")

    # then
    assert result.search_id == search_id
    assert result.meta["search_id"] == str(search_id)
    assert sorted(
        ArticleAccessEvent.objects.values_list(
            "article_id", "access_type", "search_id", "api_key_id", "subject_id"
        )
    ) == sorted(
        (hit.article.pk, "surfaced", search_id, key_id, "agent-a") for hit in result.results
    )


def test_search_only_finds_what_the_viewer_may_see(tenant, other_tenant, agent_viewer, curator):
    # given
    publish(tenant, "Deploy notes (published)", "deploy notes")
    publish(tenant, "Deploy notes (draft)", "deploy draft notes", status="draft")
    publish(
        tenant,
        "Deploy notes (agent-b)",
        "deploy private",
        visibility="owner",
        owner_agent_id="agent-b",
    )
    publish(
        tenant, "Deploy notes (mine)", "deploy mine", visibility="owner", owner_agent_id="agent-a"
    )
    publish(tenant, "Deploy notes (archived)", "deploy archived", status="archived")
    publish(other_tenant, "Deploy notes (foreign)", "deploy foreign")

    # when
    as_agent = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy notes")
    as_curator = knowledge_search(tenant=tenant, viewer=curator, query="deploy notes")

    # then
    assert sorted(titles(as_agent)) == ["Deploy notes (mine)", "Deploy notes (published)"]
    assert sorted(titles(as_curator)) == [
        "Deploy notes (agent-b)",
        "Deploy notes (draft)",
        "Deploy notes (mine)",
        "Deploy notes (published)",
    ]


def test_the_project_partition_is_global_plus_the_active_project(tenant, agent_viewer):
    # given
    ours, theirs = ProjectFactory.create(tenant=tenant), ProjectFactory.create(tenant=tenant)
    publish(tenant, "Global deploy", "deploy everywhere")
    publish(tenant, "Our deploy", "deploy ours", project_id=ours.pk)
    publish(tenant, "Their deploy", "deploy theirs", project_id=theirs.pk)

    # when
    global_only = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")
    with_ours = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="deploy", project_id=ours.pk
    )
    unknown = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="deploy", project_id=uuid.uuid4()
    )

    # then
    assert titles(global_only) == ["Global deploy"]
    assert sorted(titles(with_ours)) == ["Global deploy", "Our deploy"]
    assert titles(unknown) == ["Global deploy"]


@pytest.fixture
def twins(tenant):
    """Two near-copies (different bodies, near-identical vectors) and one distinct article."""
    body = "Outbound HTTP calls retry at most three times with exponential backoff and jitter"
    return [
        publish(tenant, "Retry policy", body + "."),
        publish(tenant, "Retry policy (copy)", body + " !"),
        publish(tenant, "Timeouts", "Outbound HTTP calls time out after five seconds."),
    ]


def test_reduce_mode_returns_only_the_diverse_picks(tenant, twins, agent_viewer):
    # when
    result = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="outbound http retry", limit=2, mode="reduce"
    )

    # then: the copy is dropped and its slot refilled
    assert sorted(titles(result)) == ["Retry policy", "Timeouts"]
    diversity = result.meta["diversity"]
    assert (diversity["candidates"], diversity["selected"]) == (3, 2)
    assert diversity["dropped_near_duplicates"] == 1
    assert result.meta["limit"] == 2


def test_reorder_mode_demotes_what_was_not_picked_behind_the_pool(tenant, twins, agent_viewer):
    # when: a page of 2, then the next page
    first = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="outbound http retry", limit=2
    )
    second = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="outbound http retry", limit=2, offset=2
    )

    # then: paging still partitions the pool, with the copy last
    assert sorted(titles(first)) == ["Retry policy", "Timeouts"]
    assert titles(second) == ["Retry policy (copy)"]
    assert [hit.rank for hit in second.results] == [3]


def test_diversity_knobs_are_overridable_per_call(tenant, twins, agent_viewer):
    # when
    result = knowledge_search(
        tenant=tenant,
        viewer=agent_viewer,
        query="outbound http retry",
        limit=2,
        mode="reduce",
        diversity=DiversityOptions(enabled=False),
    )

    # then
    assert titles(result) == ["Retry policy", "Retry policy (copy)"]
    assert result.meta["diversity"]["enabled"] is False


def test_identical_bodies_collapse_to_the_highest_ranked(tenant, agent_viewer):
    # given: the same body filed in a project, then globally (a global write does not see
    # project articles, so the gate lets it through)
    project = ProjectFactory.create(tenant=tenant)
    publish(
        tenant,
        "Pagination (project)",
        "List endpoints accept limit and offset.",
        project_id=project.pk,
    )
    publish(tenant, "Pagination", "List endpoints accept limit and offset.")

    # when
    result = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="pagination", project_id=project.pk, mode="reduce"
    )

    # then
    assert len(result.results) == 1
    assert result.meta["diversity"]["dropped_exact_duplicates"] == 1


def test_a_session_is_shown_unseen_articles_first_then_repeats(tenant, agent_viewer):
    # given
    publish(tenant, "Deploy freeze", "deploy freeze friday")
    publish(tenant, "Deploy checklist", "deploy checklist steps")

    def search():
        # Served: the read, then the history mark that serving it records.
        result = knowledge_search(
            tenant=tenant, viewer=agent_viewer, query="deploy", limit=1, session_id="s-1"
        )
        knowledge_search_record(tenant=tenant, viewer=agent_viewer, api_key_id=None, result=result)
        return result

    # when
    first, second, third = search(), search(), search()
    other_session = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="deploy", limit=1, session_id="s-2"
    )

    # then
    assert {titles(first)[0], titles(second)[0]} == {"Deploy freeze", "Deploy checklist"}
    assert second.meta["diversity"]["dropped_already_seen"] == 1
    assert third.meta["diversity"]["readmitted_already_seen"] == 1
    assert titles(third) == titles(first)
    assert titles(other_session) == titles(first)


def test_another_agent_with_the_same_session_token_is_unaffected(tenant, agent_viewer):
    # given
    publish(tenant, "Deploy freeze", "deploy freeze friday")
    publish(tenant, "Deploy checklist", "deploy checklist steps")
    mine = knowledge_search(
        tenant=tenant, viewer=agent_viewer, query="deploy", limit=1, session_id="s"
    )

    # when
    theirs = knowledge_search(
        tenant=tenant, viewer=Viewer.for_subject("agent-b"), query="deploy", limit=1, session_id="s"
    )

    # then
    assert titles(theirs) == titles(mine)
    assert theirs.meta["diversity"]["dropped_already_seen"] == 0


def test_a_large_tenant_uses_the_iterative_hnsw_scan_with_the_same_answer(
    tenant, wiki, agent_viewer, settings
):
    # given: an own draft is not in the published index but must still be found
    publish(tenant, "Deploy draft", "deploy draft", status="draft", owner_agent_id="agent-a")
    exact = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")
    settings.KNOWLEDGE_EXACT_SCAN_MAX_ROWS = 0

    # when
    ann = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")

    # then
    assert ann.meta["ann_iterative_scan"] == "applied"
    assert titles(ann) == titles(exact)


def test_websearch_operators_give_strict_semantics(tenant, wiki, agent_viewer):
    # given
    break_embeddings(tenant)

    # when
    loose = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy fridays")
    strict = knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy -fridays")

    # then
    assert loose.meta["keyword_mode"] == "any_terms"
    assert len(loose.results) == 2
    assert strict.meta["keyword_mode"] == "websearch"
    assert titles(strict) == ["Database migrations run before the web deploy"]


def test_an_empty_wiki_answers_nothing(tenant, agent_viewer):
    # when
    result = knowledge_search(tenant=tenant, viewer=agent_viewer, query="anything")

    # then
    assert result.results == []
    assert (result.meta["answer_confidence"], result.meta["confidence"]) == ("none", 0.0)
    assert result.meta["total_count"] == 0


def test_the_snippet_is_a_window_around_the_first_matching_term(settings):
    # given
    settings.KNOWLEDGE_SNIPPET_CHARS = 40
    body = "Intro text that goes on. " * 4 + "Redis may vanish on failover. " + "Tail. " * 10

    # when
    snippet = snippet_for(body, "what about failover")

    # then
    assert "failover" in snippet
    assert snippet.startswith("…")
    assert snippet.endswith("…")
    assert len(snippet) == 42


def test_article_rows_are_loaded_once_for_the_whole_pool(
    tenant, wiki, agent_viewer, django_assert_max_num_queries
):
    # when / then: embed, curated, keyword, count, kNN, load, surfaced insert (+ savepoints)
    with django_assert_max_num_queries(10):
        knowledge_search(tenant=tenant, viewer=agent_viewer, query="deploy")
    assert Article.objects.count() == 3


def test_a_failing_heavy_read_repo_degrades_to_keywords_on_the_oltp_repo(tenant, mocker):
    from django.db import OperationalError

    from apps.knowledge.selectors import knowledge_search
    from apps.knowledge.viewer import Viewer
    from tests.knowledge.helpers import publish

    publish(tenant, "Deploy policy", "All deploys go through argo cd.")
    mocker.patch(
        "apps.knowledge.selectors.search.run_legs",
        side_effect=OperationalError("canceling statement due to statement timeout"),
    )

    result = knowledge_search(
        tenant=tenant, viewer=Viewer.for_subject("agent-a"), query="deploys argo"
    )

    assert [hit.article.title for hit in result.results] == ["Deploy policy"]
    assert result.meta["degraded"] is True
    assert result.meta["degraded_reason"] == "heavy_read_unavailable"
    assert result.results[0].selection_reason == "keyword_fallback"
