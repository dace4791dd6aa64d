"""Read-your-writes: a memory is found by its words before its embedding lands."""

import pytest

from apps.memory.selectors import memory_recall
from apps.memory.services import memory_embed_pending, memory_forget
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory

RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"


def _hits(result):
    return [(hit.memory.text, hit.selection_reason, hit.embedding_status) for hit in result.results]


@pytest.fixture
def pending(tenant, other_tenant):
    """One embedded and one pending row for subject a, and pending rows it must never see."""
    remember(tenant, "a", "the kettle is in the kitchen")
    fresh = remember(tenant, "a", "the zeppelin lands on tuesday", embed=False)
    remember(tenant, "b", "another subject's zeppelin schedule", embed=False)
    remember(other_tenant, "a", "a foreign tenant's zeppelin schedule", embed=False)
    alpha = ProjectFactory.create(tenant=tenant)
    remember(tenant, "a", "the alpha zeppelin is grounded", embed=False, project_id=alpha.pk)
    return fresh, alpha


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_pending_row_is_found_by_its_words_flagged_and_scoped(tenant, pending, mode):
    result = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode=mode)

    # hybrid's vector leg also ranks the embedded row (the fake embedder knows no meaning).
    assert _hits(result)[0] == ("the zeppelin lands on tuesday", "keyword_pending", "pending")
    assert [hit.memory.text for hit in result.results][1:] == (
        ["the kettle is in the kitchen"] if mode == "hybrid" else []
    )
    assert result.meta["pending_searched"] == 1  # not b's, not the other tenant's, not alpha's
    assert (result.meta["fallback"], result.meta["reason"]) == (False, None)


def test_the_project_partition_holds_for_pending_rows(tenant, pending):
    _fresh, alpha = pending

    result = memory_recall(
        tenant=tenant, subject_id="a", query="zeppelin", mode="keyword", project_id=alpha.pk
    )

    assert sorted(_hits(result)) == [
        ("the alpha zeppelin is grounded", "keyword_pending", "pending"),
        ("the zeppelin lands on tuesday", "keyword_pending", "pending"),
    ]
    assert result.meta["pending_searched"] == 2


def test_semantic_mode_ranks_embedded_rows_only(tenant, pending):
    result = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode="semantic")

    assert [hit.memory.text for hit in result.results] == ["the kettle is in the kitchen"]
    assert result.results[0].embedding_status == "ready"
    assert result.meta["pending_searched"] == 0


def test_once_embedded_the_hit_is_no_longer_pending(tenant, pending):
    fresh, _alpha = pending
    memory_embed_pending(memory_ids=[str(fresh.pk)])

    result = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode="hybrid")

    assert _hits(result)[0] == ("the zeppelin lands on tuesday", "keyword+semantic", "ready")
    assert result.meta["pending_searched"] == 0


def test_a_forgotten_pending_row_is_not_found(tenant, pending):
    fresh, _alpha = pending
    memory_forget(tenant=tenant, subject_id="a", memory_id=fresh.pk)

    result = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode="hybrid")

    assert "the zeppelin lands on tuesday" not in [hit.memory.text for hit in result.results]
    assert result.meta["pending_searched"] == 0


def test_a_healthy_scope_with_no_match_is_still_empty_not_a_fallback(tenant, pending):
    # Subject b holds one pending row only: nothing for the vector leg, no word matches.
    result = memory_recall(tenant=tenant, subject_id="b", query="submarine", mode="hybrid")

    assert result.results == []
    assert (result.meta["fallback"], result.meta["reason"]) == (False, None)
    assert result.meta["pending_searched"] == 1


def test_the_fallback_flags_pending_rows_and_counts_them(tenant, pending):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()

    result = memory_recall(tenant=tenant, subject_id="a", query="zeppelin", mode="hybrid")

    assert _hits(result) == [("the zeppelin lands on tuesday", "keyword_fallback", "pending")]
    assert result.meta["fallback"] is True
    assert result.meta["pending_searched"] == 1


def test_over_http_a_write_is_found_the_moment_it_returns(agent, other_agent, mocker):
    # No embedding task runs: the row is still pending when the recall comes in.
    mocker.patch("apps.memory.services.rows._wake_embedding_after_commit")
    written = agent.post("/api/v1/memory", {"text": "the zeppelin lands on tuesday"})
    assert written.status_code == 201, written.content

    body = agent.post(RECALL, {"query": "when does the zeppelin land?"}).json()
    theirs = other_agent.post(RECALL, {"query": "when does the zeppelin land?"}).json()
    merged = agent.post(MERGED, {"query": "when does the zeppelin land?"}).json()

    assert [
        (hit["memory"]["id"], hit["selection_reason"], hit["embedding_status"])
        for hit in body["data"]
    ] == [(written.json()["data"]["id"], "keyword_pending", "pending")]
    assert body["data"][0]["memory"]["embedding_status"] == "pending"
    assert body["meta"]["pending_searched"] == 1
    assert theirs["data"] == []
    assert theirs["meta"]["pending_searched"] == 0
    memory_items = [item for item in merged["data"] if item["source"] == "memory"]
    assert [(item["selection_reason"], item["embedding_status"]) for item in memory_items] == [
        ("keyword_pending", "pending")
    ]
