"""The knowledge, merged-recall and graduation tools, round-tripped through a live server."""

from typing import Any

import pytest

from apps.knowledge.models import Article, ArticleAccessEvent
from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending
from apps.projects.services import project_create
from tests.mcp.helpers import McpAgent

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

FREEZE = {
    "title": "Friday deploy freeze",
    "body": "We never deploy to production on Fridays; hotfixes for incidents are the exception.",
    "category": "decision",
    "tags": ["deploy"],
}


def _remember(agent: McpAgent, text: str, **arguments: Any):
    memory = agent.ok("memory_remember", text=text, **arguments)["data"]
    memory_embed_pending(memory_ids=[memory["id"]])
    return memory


def _item_id(item: dict) -> str:
    """A merged item's id: its own ``id``, or the id of the memory/article it wraps."""
    if "id" in item:
        return str(item["id"])
    nested = next(item[key] for key in ("article", "knowledge", "memory") if key in item)
    return str(nested["id"])


# ----------------------------------------------------------------------------- knowledge


def test_knowledge_create_goes_through_the_gate_and_search_finds_it(mcp_agent, mcp_peer):
    created = mcp_agent.ok("knowledge_create", **FREEZE)["data"]
    duplicate = mcp_peer.ok("knowledge_create", **{**FREEZE, "title": "Freeze, again"})["data"]
    found = mcp_peer.ok("knowledge_search", query="deploy on fridays", limit=5)

    article = Article.objects.get()
    assert (created["verdict"], created["created"]) == ("created", True)
    assert (duplicate["verdict"], duplicate["created"]) == ("duplicate", False)
    assert duplicate["article"]["id"] == created["article"]["id"] == str(article.pk)
    assert (article.owner_agent_id, article.status, article.visibility) == (
        "agent-a",
        "published",
        "tenant",
    )
    assert [hit["id"] for hit in found["data"]] == [str(article.pk)]
    assert found["data"][0]["title"] == "Friday deploy freeze"
    assert set(found["meta"]) >= {"search_id", "answer_confidence", "provenance"}


def test_an_owner_visible_article_is_not_found_by_a_peer(mcp_agent, mcp_peer):
    mine = mcp_agent.ok("knowledge_create", **FREEZE, visibility="owner")["data"]["article"]

    own_search = mcp_agent.ok("knowledge_search", query="deploy on fridays")["data"]
    peer_search = mcp_peer.ok("knowledge_search", query="deploy on fridays")["data"]

    assert mine["visibility"] == "owner"
    assert [hit["id"] for hit in own_search] == [mine["id"]]
    assert peer_search == []


def test_knowledge_create_in_a_project_and_search_by_it(mcp_agent, tenant):
    project = project_create(tenant=tenant, name="Engram")
    project_id = mcp_agent.ok("resolve_project", name="engram")["data"]["id"]

    created = mcp_agent.ok("knowledge_create", **FREEZE, project_id=project_id)["data"]
    outside = mcp_agent.ok("knowledge_search", query="deploy on fridays")["data"]
    inside = mcp_agent.ok("knowledge_search", query="deploy on fridays", project_id=project_id)

    assert created["article"]["project_id"] == str(project.pk)
    assert outside == []
    assert [hit["id"] for hit in inside["data"]] == [created["article"]["id"]]


def test_knowledge_errors_carry_their_codes(mcp_agent):
    mcp_agent.ok("knowledge_create", **FREEZE)

    too_long = mcp_agent.fails("knowledge_search", query="q" * 501)
    taken = mcp_agent.fails(
        "knowledge_create", title=FREEZE["title"], body="Something else.", category="finding"
    )

    assert too_long.startswith("query_too_long: ")
    assert taken.startswith("title_taken: ")
    assert Article.objects.count() == 1


# ----------------------------------------------------------------------------- merged recall


def test_recall_context_merges_memory_and_knowledge_and_referenced_records_use(mcp_agent):
    memory = _remember(mcp_agent, "The user wants deploys announced in #ops before Friday")
    article = mcp_agent.ok("knowledge_create", **FREEZE)["data"]["article"]

    recalled = mcp_agent.ok("recall_context", query="deploy on fridays", limit=5)
    by_source = {item["source"]: _item_id(item) for item in recalled["data"]}
    recall_id = recalled["meta"]["recall_id"]
    referenced = mcp_agent.call(
        "recall_referenced", recall_id=recall_id, article_ids=[article["id"]]
    )
    not_surfaced = mcp_agent.fails(
        "recall_referenced", recall_id=recall_id, article_ids=[memory["id"]]
    )

    assert by_source == {"memory": memory["id"], "knowledge": article["id"]}
    assert [item["rank"] for item in recalled["data"]] == [1, 2]
    assert recalled["meta"]["results_ranking"] == "heuristic_cross_source"
    assert referenced.is_error is False
    assert not_surfaced.startswith("not_surfaced: ")
    events = ArticleAccessEvent.objects.filter(access_type="referenced")
    assert [(str(e.article_id), str(e.search_id)) for e in events] == [(article["id"], recall_id)]


def test_recall_context_rejects_an_over_long_query(mcp_agent):
    assert mcp_agent.fails("recall_context", query="x" * 501).startswith("query_too_long: ")


def test_recall_context_never_shows_another_subjects_memory(mcp_agent, mcp_peer):
    _remember(mcp_peer, "agent-b's deploy secret: deploys happen on Fridays")
    mine = _remember(mcp_agent, "agent-a's deploy note: Fridays are quiet")

    recalled = mcp_agent.ok("recall_context", query="deploys on Fridays", limit=10)["data"]

    assert [_item_id(item) for item in recalled if item["source"] == "memory"] == [mine["id"]]


# ----------------------------------------------------------------------------- graduation


def test_memory_graduate_writes_an_owner_visible_article_once(mcp_agent, mcp_peer):
    memory = _remember(mcp_agent, "Staging resets every night at 02:00 UTC")

    first = mcp_agent.ok("memory_graduate", memory_id=memory["id"])["data"]
    again = mcp_agent.ok("memory_graduate", memory_id=memory["id"])["data"]
    peer_search = mcp_peer.ok("knowledge_search", query="staging resets nightly")["data"]

    assert (first["verdict"], first["created"]) == ("created", True)
    assert first["article"]["visibility"] == "owner"
    assert Article.objects.get(pk=first["article"]["id"]).owner_agent_id == "agent-a"
    assert again["created"] is False
    assert again["article"]["id"] == first["article"]["id"]
    assert first["article"]["id"] not in {hit["id"] for hit in peer_search}
    assert Memory.objects.get(pk=memory["id"]).graduated_at is not None


def test_memory_graduate_re_scopes_a_project_memory_only_on_first_graduation(mcp_agent, tenant):
    project = project_create(tenant=tenant, name="Engram")
    memory = _remember(mcp_agent, "The engram repo pins Python 3.11", project_id=str(project.pk))

    graduated = mcp_agent.ok("memory_graduate", memory_id=memory["id"])["data"]
    refused = mcp_agent.fails("memory_graduate", memory_id=memory["id"], re_scope="global")

    assert graduated["article"]["project_id"] == str(project.pk)
    assert refused.startswith("already_graduated: ")


def test_graduating_another_subjects_memory_is_not_found(mcp_agent, mcp_peer):
    theirs = _remember(mcp_peer, "agent-b's private fact")

    missing = mcp_agent.fails("memory_graduate", memory_id=theirs["id"])
    malformed = mcp_agent.fails("memory_graduate", memory_id="not-a-uuid")

    assert missing.startswith("not_found: ")
    assert malformed.startswith("invalid_memory_id: ")
    assert Article.objects.count() == 0
    assert Memory.objects.get(pk=theirs["id"]).graduated_at is None


def test_knowledge_context_reads_the_top_articles_in_full(mcp_agent, mcp_peer):
    created = mcp_agent.ok("knowledge_create", **FREEZE)["data"]["article"]

    context = mcp_peer.ok("knowledge_context", query="deploy on fridays", limit=2)

    (article,) = context["data"]["results"]
    assert (article["id"], article["body"]) == (created["id"], FREEZE["body"])
    assert article["links"] == []
    assert context["data"]["linked"] == []
    assert set(context["meta"]) >= {"search_id", "answer_confidence", "linked_count"}
