"""Recall modes (semantic | keyword | hybrid) and the keyword-served fallback."""

import pytest

from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import heavy_read_slot
from apps.core.repos import ScopeViolation, heavy_read_memories
from apps.memory.selectors import memory_recall, reset_scope_templates
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_supersede
from tests.memory.factories import memory_row
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory

RECALL = "/api/v1/memory/recall"


def _texts(result):
    return [hit.memory.text for hit in result.results]


def _reasons(result):
    return [hit.selection_reason for hit in result.results]


def _break_embeddings(tenant):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()


@pytest.fixture
def notes(tenant, other_tenant):
    memory_row(tenant, "a", "the deploy pipeline runs on friday afternoons")
    memory_row(tenant, "a", "dark mode is preferred in the editor")
    memory_row(tenant, "a", "lunch is at noon")
    memory_row(tenant, "b", "another subject's deploy pipeline notes")
    memory_row(other_tenant, "a", "a foreign tenant's deploy pipeline notes")
    return tenant


def test_keyword_mode_ranks_by_words_in_scope_only(notes):
    result = memory_recall(
        tenant=notes, subject_id="a", query="When does the deploy pipeline run?", mode="keyword"
    )

    assert _texts(result) == ["the deploy pipeline runs on friday afternoons"]
    assert _reasons(result) == ["keyword"]
    assert result.results[0].score is not None
    assert result.results[0].score > 0
    assert result.meta["mode"] == "keyword"
    assert result.meta["strategy"] == "keyword"
    assert (result.meta["fallback"], result.meta["reason"]) == (False, None)
    assert result.meta["total_count"] == 1
    assert result.meta["underfilled"] is True


def test_keyword_mode_needs_no_embedding_call(notes, mocker):
    embed = mocker.patch("apps.memory.selectors.recall.embed_query_soon")

    result = memory_recall(tenant=notes, subject_id="a", query="editor", mode="keyword")

    assert _texts(result) == ["dark mode is preferred in the editor"]
    embed.assert_not_called()


def test_keyword_weight_follows_rarity_within_the_subject(tenant):
    # "alice" is in every memory, "kayak" in one: the rare word decides.
    memory_row(tenant, "a", "Alice: I like green tea")
    memory_row(tenant, "a", "Alice: I went hiking with Alice's dog, Alice says")
    memory_row(tenant, "a", "Bob: Alice bought a kayak")

    result = memory_recall(tenant=tenant, subject_id="a", query="Alice kayak", mode="keyword")

    assert _texts(result)[0] == "Bob: Alice bought a kayak"
    assert len(result.results) == 3


def test_context_is_searchable_but_weighs_less_than_text_and_is_never_returned(tenant):
    memory_row(tenant, "a", "Yes, last Tuesday!", context="Did you visit the aquarium?")
    memory_row(tenant, "a", "The aquarium visit was great", context="")
    memory_row(tenant, "a", "Unrelated", context="nothing here")

    result = memory_recall(tenant=tenant, subject_id="a", query="aquarium visit", mode="keyword")

    assert _texts(result) == ["The aquarium visit was great", "Yes, last Tuesday!"]
    assert result.results[0].memory.context == ""
    assert result.results[1].memory.context == "Did you visit the aquarium?"


def test_hybrid_fuses_both_legs_and_labels_each_hit(notes):
    result = memory_recall(
        tenant=notes, subject_id="a", query="deploy pipeline", mode="hybrid", limit=10
    )

    assert _texts(result)[0] == "the deploy pipeline runs on friday afternoons"
    # First in both legs is the normalised maximum.
    assert result.results[0].score == 1.0
    assert _reasons(result)[0] == "keyword+semantic"
    # Every embedded row of the subject is in the (exact) vector leg; only one shares a word.
    assert sorted(_reasons(result)[1:]) == ["semantic", "semantic"]
    assert len(result.results) == 3
    scores = [hit.score or 0.0 for hit in result.results]
    assert scores == sorted(scores, reverse=True)
    assert result.meta["mode"] == "hybrid"
    assert result.meta["strategy"] == "exact"
    assert result.meta["ann_iterative_scan"] == "off"


def test_semantic_mode_is_the_vector_ranking_alone(notes):
    result = memory_recall(tenant=notes, subject_id="a", query="deploy pipeline", mode="semantic")

    assert set(_reasons(result)) == {"semantic"}
    assert result.results[0].score == result.results[0].similarity
    assert result.meta["mode"] == "semantic"


def test_default_mode_is_the_setting(notes, settings):
    assert memory_recall(tenant=notes, subject_id="a", query="editor").meta["mode"] == "hybrid"
    settings.MEMORY_RECALL_DEFAULT_MODE = "keyword"

    assert memory_recall(tenant=notes, subject_id="a", query="editor").meta["mode"] == "keyword"


def test_unknown_mode_is_refused(notes):
    with pytest.raises(ValidationFailed):
        memory_recall(tenant=notes, subject_id="a", query="editor", mode="fuzzy")


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_keyword_legs_honour_supersede_and_project_partition(tenant, mode):
    alpha = ProjectFactory.create(tenant=tenant)
    old = remember(tenant, "a", "builds run on jenkins")
    new = memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("builds run on argo")
    )
    memory_embed_pending(memory_ids=[str(new.pk)])
    remember(tenant, "a", "alpha builds run nightly", project_id=alpha.pk)

    def recall(**kwargs):
        return sorted(
            _texts(
                memory_recall(tenant=tenant, subject_id="a", query="builds", mode=mode, **kwargs)
            )
        )

    assert recall() == ["builds run on argo"]
    assert recall(project_id=alpha.pk) == ["alpha builds run nightly", "builds run on argo"]
    assert recall(include_superseded=True) == ["builds run on argo", "builds run on jenkins"]


@pytest.fixture
def fresh_scope_templates():
    """Recall compiles its guarded scope once per query shape; start (and end) without any."""
    reset_scope_templates()
    yield
    reset_scope_templates()


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_a_scope_the_guard_refuses_is_never_run(notes, mocker, mode, fresh_scope_templates):
    guard = mocker.patch(
        "apps.memory.selectors.recall.scope.heavy_read_memories", side_effect=ScopeViolation("no")
    )

    with pytest.raises(ScopeViolation):
        memory_recall(tenant=notes, subject_id="a", query="deploy", mode=mode)

    assert guard.call_count == 1


def test_the_guard_checks_each_scope_shape_once_and_every_recall_binds_its_own_scope(
    notes, mocker, fresh_scope_templates
):
    guard = mocker.patch(
        "apps.memory.selectors.recall.scope.heavy_read_memories", wraps=heavy_read_memories
    )

    for subject_id in ("a", "b", "a"):
        result = memory_recall(tenant=notes, subject_id=subject_id, query="deploy", mode="hybrid")
        assert result.results
        assert {hit.memory.subject_id for hit in result.results} == {subject_id}
    memory_recall(tenant=notes, subject_id="a", query="deploy", include_superseded=True)

    # Live-only and include_superseded, each over the query model's vectors (vector leg),
    # embedded rows of any model (its size check and the keyword leg's statistics), all
    # (keyword leg) and pending (their count) rows: eight shapes, one guard check each, not
    # one per call.
    assert guard.call_count == 8
    shapes = {call.kwargs["subject_id"] for call in guard.call_args_list}
    assert shapes.isdisjoint({"a", "b"})  # checked on the placeholder-bound template


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_shed_heavy_read_is_served_by_the_keyword_fallback(notes, settings, mode):
    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1

    with heavy_read_slot(tenant_id=notes.pk):
        result = memory_recall(tenant=notes, subject_id="a", query="deploy pipeline", mode=mode)

    assert _texts(result) == ["the deploy pipeline runs on friday afternoons"]
    assert _reasons(result) == ["keyword_fallback"]
    assert result.results[0].score is None
    assert (result.meta["fallback"], result.meta["reason"]) == (True, "heavy_read_shed")
    assert result.meta["strategy"] == "fallback"
    assert result.meta["mode"] == mode


def test_embeddings_down_is_served_by_keywords_in_scope_only(notes):
    memory_row(notes, "a", "pending deploy pipeline row", embedded=False)
    _break_embeddings(notes)

    result = memory_recall(tenant=notes, subject_id="a", query="deploy pipeline")

    # Pending rows count on the fallback path; other subjects and tenants never do.
    assert sorted(_texts(result)) == [
        "pending deploy pipeline row",
        "the deploy pipeline runs on friday afternoons",
    ]
    assert set(_reasons(result)) == {"keyword_fallback"}
    assert [hit.score for hit in result.results] == [None, None]
    assert (result.meta["fallback"], result.meta["reason"]) == (True, "provider_error")
    assert "ann_iterative_scan" not in result.meta


def test_fallback_ranks_by_keywords_then_tops_up_by_substring(tenant):
    memory_row(tenant, "a", "the product catalogue moved", embedded=False)
    memory_row(tenant, "a", "catalog sync failed twice", embedded=False)
    memory_row(tenant, "a", "the catalog is large", embedded=False)
    memory_row(tenant, "b", "catalog of subject b", embedded=False)
    _break_embeddings(tenant)

    result = memory_recall(tenant=tenant, subject_id="a", query="catalog sync", limit=10)

    # Both words beat one; "catalogue" shares no lexeme with "catalog" (a substring only).
    assert _texts(result) == [
        "catalog sync failed twice",
        "the catalog is large",
        "the product catalogue moved",
    ]
    assert _reasons(result) == ["keyword_fallback", "keyword_fallback", "ilike_fallback"]


def test_fallback_excludes_superseded_and_other_projects(tenant):
    alpha = ProjectFactory.create(tenant=tenant)
    old = remember(tenant, "a", "builds run on jenkins")
    memory_supersede(
        tenant=tenant, subject_id="a", memory_id=old.pk, draft=MemoryDraft("builds run on argo")
    )
    remember(tenant, "a", "alpha builds run nightly", project_id=alpha.pk)
    _break_embeddings(tenant)

    result = memory_recall(tenant=tenant, subject_id="a", query="builds")

    assert _texts(result) == ["builds run on argo"]


@pytest.mark.parametrize(
    ("_case", "mode", "reasons"),
    [
        ("keyword", "keyword", ["keyword"]),
        ("semantic", "semantic", ["semantic", "semantic"]),
        ("hybrid", "hybrid", ["keyword+semantic", "semantic"]),
    ],
)
def test_api_takes_a_mode_and_returns_selection_reasons(agent, tenant, _case, mode, reasons):
    mine = memory_row(tenant, "agent-a", "the deploy pipeline runs on friday")
    memory_row(tenant, "agent-a", "lunch is at noon")
    memory_row(tenant, "agent-b", "agent b's deploy pipeline")

    response = agent.post(RECALL, {"query": "deploy pipeline", "mode": mode})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["meta"]["mode"] == mode
    assert body["data"][0]["memory"]["id"] == str(mine.pk)
    assert [hit["selection_reason"] for hit in body["data"]] == reasons


def test_api_refuses_an_unknown_mode_with_422(agent):
    response = agent.post(RECALL, {"query": "deploy", "mode": "fuzzy"})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


def test_a_repeated_recall_reuses_its_query_vector_and_ranks_the_same(notes, mocker):
    from apps.providers import query_vectors

    query_vectors.clear_query_vectors()
    embed = mocker.spy(query_vectors, "embed_search_query")

    first = memory_recall(tenant=notes, subject_id="a", query="editor dark mode")
    again = memory_recall(tenant=notes, subject_id="a", query="editor dark mode")
    other_subject = memory_recall(tenant=notes, subject_id="b", query="editor dark mode")

    assert embed.call_count == 2  # once for "a", once for "b": never shared between callers
    assert [(hit.memory.pk, hit.score, hit.similarity) for hit in again.results] == [
        (hit.memory.pk, hit.score, hit.similarity) for hit in first.results
    ]
    assert first.results
    assert other_subject.results
    assert all(hit.memory.subject_id == "b" for hit in other_subject.results)


def test_hybrid_runs_the_keyword_leg_while_the_query_is_embedded(notes, mocker):
    import threading
    from contextlib import ExitStack

    from django.db import connections

    from apps.providers import query_vectors
    from apps.providers.embeddings import embed_search_query

    query_vectors.clear_query_vectors()
    keyword_ran = threading.Event()

    def embed_after_the_keyword_leg(config, text):
        # A recall that embedded its query before running the keyword leg would wait here in
        # vain, and the recall would fail with this AssertionError.
        assert keyword_ran.wait(timeout=10), "the keyword leg did not run during the embedding"
        return embed_search_query(config, text)

    def watch(execute, sql, params, many, context):
        outcome = execute(sql, params, many, context)
        if "WITH terms AS" in sql:
            keyword_ran.set()
        return outcome

    mocker.patch.object(
        query_vectors, "embed_search_query", side_effect=embed_after_the_keyword_leg
    )
    with ExitStack() as stack:
        for alias in ("default", "heavy_read"):
            stack.enter_context(connections[alias].execute_wrapper(watch))
        result = memory_recall(tenant=notes, subject_id="a", query="editor dark mode")

    assert result.meta["mode"] == "hybrid"
    assert result.meta["fallback"] is False
    assert result.results[0].memory.text == "dark mode is preferred in the editor"
    assert result.results[0].selection_reason == "keyword+semantic"
    assert result.results[0].similarity is not None
