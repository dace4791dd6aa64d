"""Late interaction over hybrid's fused head (``recall/rerank.py``)."""

import uuid

import pytest

from apps.memory.selectors import (
    fetch_texts,
    forget_head_texts,
    head_texts,
    keyword_scopes,
    late_interaction_scores,
    memory_recall,
    rerank_enabled,
)
from tests.memory.factories import memory_row


@pytest.fixture
def local_minilm(settings):
    settings.EMBEDDING_PROVIDER = "local"
    settings.LOCAL_EMBEDDING_MODEL = "minilm"
    settings.MEMORY_RECALL_RERANK_CANDIDATES = 30


def _head(*texts):
    by_id = {uuid.uuid4(): text for text in texts}
    return by_id, list(by_id)


@pytest.mark.parametrize(
    ("_case", "provider", "candidates", "expected"),
    [
        ("local_with_candidates", "local", 30, True),
        ("switched_off", "local", 0, False),
        ("no_token_table", "fake", 30, False),
    ],
)
def test_rerank_enabled(settings, _case, provider, candidates, expected):
    settings.EMBEDDING_PROVIDER = provider
    settings.LOCAL_EMBEDDING_MODEL = "minilm"
    settings.MEMORY_RECALL_RERANK_CANDIDATES = candidates

    assert rerank_enabled() is expected


def test_the_memory_that_shares_the_query_tokens_rises(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_WEIGHT = 1.0
    memories, (unrelated, matching) = _head(
        "The quarterly tax filing is due in April", "I painted the lake at sunrise"
    )

    ranked = late_interaction_scores(
        "Which lake did she paint at sunrise?", [(unrelated, 1.0), (matching, 0.9)], memories
    )

    assert ranked == [(matching, 1.0), (unrelated, 0.0)]


def test_weight_zero_keeps_the_fused_order_and_scores(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_WEIGHT = 0.0
    memories, (unrelated, matching) = _head(
        "The quarterly tax filing is due in April", "I painted the lake at sunrise"
    )

    ranked = late_interaction_scores(
        "Which lake did she paint at sunrise?", [(unrelated, 0.8), (matching, 0.4)], memories
    )

    assert ranked == [(unrelated, 0.8), (matching, 0.4)]


def test_the_blend_weighs_maxsim_against_the_fused_score(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_WEIGHT = 0.4
    memories, (unrelated, matching) = _head(
        "The quarterly tax filing is due in April", "I painted the lake at sunrise"
    )

    ranked = late_interaction_scores(
        "Which lake did she paint at sunrise?", [(unrelated, 1.0), (matching, 0.5)], memories
    )

    assert ranked == [(matching, 0.7), (unrelated, 0.6)]


def test_past_the_head_the_fused_order_stands_below_every_head_score(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_CANDIDATES = 2
    settings.MEMORY_RECALL_RERANK_WEIGHT = 0.5
    memories, (unrelated, matching, past) = _head(
        "The quarterly tax filing is due in April",
        "I painted the lake at sunrise",
        "The lake at sunrise, painted",
    )

    ranked = late_interaction_scores(
        "Which lake did she paint at sunrise?",
        [(unrelated, 1.0), (matching, 0.9), (past, 0.8)],
        memories,
    )

    assert ranked == [(matching, 0.95), (unrelated, 0.5), (past, 0.4)]


def test_a_candidate_whose_row_is_gone_is_dropped(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_WEIGHT = 0.4
    memories, (kept,) = _head("I painted the lake at sunrise")
    gone = uuid.uuid4()

    ranked = late_interaction_scores("lake", [(gone, 1.0), (kept, 0.5)], memories)

    assert ranked == [(kept, 0.7)]


def test_hybrid_recall_reorders_its_head_best_first(tenant, local_minilm):
    for text in (
        "the deploy pipeline runs on friday afternoons",
        "dark mode is preferred in the editor",
        "lunch is at noon",
    ):
        memory_row(tenant, "a", text)
    memory_row(tenant, "b", "another subject's deploy pipeline notes")

    result = memory_recall(tenant=tenant, subject_id="a", query="deploy pipeline", limit=2)

    scores = [float(hit.score or 0.0) for hit in result.results]
    assert result.meta["reranked"] == 3
    assert len(result.results) == 2
    assert result.results[0].memory.text == "the deploy pipeline runs on friday afternoons"
    assert scores == sorted(scores, reverse=True)
    assert result.meta["mode"] == "hybrid"


def test_hybrid_recall_without_a_token_table_is_not_reranked(tenant, settings):
    settings.MEMORY_RECALL_RERANK_CANDIDATES = 30  # the test provider is "fake"
    memory_row(tenant, "a", "the deploy pipeline runs on friday afternoons")
    memory_row(tenant, "a", "lunch is at noon")

    result = memory_recall(tenant=tenant, subject_id="a", query="deploy pipeline", limit=1)

    assert "reranked" not in result.meta
    assert len(result.results) == 1


def test_fetch_texts_reads_only_the_rows_in_scope(tenant, other_tenant):
    mine = memory_row(tenant, "a", "the lake at sunrise")
    other_subject = memory_row(tenant, "b", "another subject's lake")
    other_tenant_row = memory_row(other_tenant, "a", "a foreign tenant's lake")
    scopes = keyword_scopes(
        tenant=tenant, subject_id="a", project_id=None, include_superseded=False
    )

    texts = fetch_texts(scopes.any, [mine.pk, other_subject.pk, other_tenant_row.pk])

    assert texts == {mine.pk: "the lake at sunrise"}
    assert fetch_texts(scopes.any, []) == {}


def test_a_head_read_once_is_not_read_again(tenant, other_tenant, django_assert_num_queries):
    forget_head_texts()
    mine = memory_row(tenant, "a", "the lake at sunrise")
    another = memory_row(tenant, "a", "the pier at dusk")
    other_tenant_row = memory_row(other_tenant, "a", "a foreign tenant's lake")
    scopes = keyword_scopes(
        tenant=tenant, subject_id="a", project_id=None, include_superseded=False
    )

    with django_assert_num_queries(1, using="heavy_read"):
        first = head_texts(scopes.any, [mine.pk, other_tenant_row.pk])
    # Known ids cost nothing; an unknown one is read alone, in scope.
    with django_assert_num_queries(0, using="heavy_read"):
        again = head_texts(scopes.any, [mine.pk])
    with django_assert_num_queries(1, using="heavy_read"):
        grown = head_texts(scopes.any, [mine.pk, another.pk, other_tenant_row.pk])

    assert first == again == {mine.pk: "the lake at sunrise"}
    assert grown == {mine.pk: "the lake at sunrise", another.pk: "the pier at dusk"}


def test_a_memory_forgotten_after_its_text_was_read_is_not_recalled(tenant, local_minilm):
    forget_head_texts()
    kept = memory_row(tenant, "a", "the deploy pipeline runs canary stages")
    forgotten = memory_row(tenant, "a", "the deploy pipeline pauses on fridays")
    first = memory_recall(tenant=tenant, subject_id="a", query="deploy pipeline", limit=5)
    assert {hit.memory.pk for hit in first.results} == {kept.pk, forgotten.pk}

    forgotten.delete()
    second = memory_recall(tenant=tenant, subject_id="a", query="deploy pipeline", limit=5)

    assert second.meta["reranked"] == 1  # the head came from this process's texts
    assert [hit.memory.pk for hit in second.results] == [kept.pk]


def test_near_equal_token_matches_do_not_overturn_the_fused_order(local_minilm, settings):
    settings.MEMORY_RECALL_RERANK_WEIGHT = 0.4
    memories, (job, dating) = _head(
        "The user left the hospital and now works as a data analyst at Globex.",
        "The user is dating Alex now, they met at a climbing gym.",
    )
    query = "What is the user's current occupation?"
    fused = [(job, 0.9), (dating, 0.5)]

    settings.MEMORY_RECALL_RERANK_CONFIDENT_SPREAD = 1e-9  # every spread in full
    stretched = late_interaction_scores(query, fused, memories)
    settings.MEMORY_RECALL_RERANK_CONFIDENT_SPREAD = 0.05
    in_proportion = late_interaction_scores(query, fused, memories)

    # The two memories' MaxSim differ by little; stretched to the whole scale, that little
    # decides the order.
    assert [pk for pk, _score in stretched] == [dating, job]
    assert [pk for pk, _score in in_proportion] == [job, dating]
