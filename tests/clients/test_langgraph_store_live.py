"""``EngramStore`` under real LangGraph graphs, against a live Engram server."""

from __future__ import annotations

import asyncio
import threading
from typing import TypedDict

import pytest
from engram_client import AsyncEngram, Engram
from engram_client.langgraph import EngramStore, item_tags, namespace_tag
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import (
    BaseStore,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
)

from apps.memory.models import Memory as MemoryRow
from apps.memory.services import memory_embed_pending

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


class ChatState(TypedDict):
    user_id: str
    message: str
    recalled: list[str]


def remember_or_recall(state: ChatState, *, store: BaseStore) -> dict[str, list[str]]:
    """A node that files "remember: …" messages and answers anything else from memory."""
    namespace = ("memories", state["user_id"])
    if state["message"].startswith("remember: "):
        fact = state["message"].removeprefix("remember: ")
        store.put(namespace, f"fact-{len(store.search(namespace, limit=100))}", {"text": fact})
        return {"recalled": []}
    hits = store.search(namespace, query=state["message"], limit=2)
    return {"recalled": [hit.value["text"] for hit in hits]}


async def aremember_or_recall(state: ChatState, *, store: BaseStore) -> dict[str, list[str]]:
    namespace = ("memories", state["user_id"])
    if state["message"].startswith("remember: "):
        fact = state["message"].removeprefix("remember: ")
        existing = await store.asearch(namespace, limit=100)
        await store.aput(namespace, f"fact-{len(existing)}", {"text": fact})
        return {"recalled": []}
    hits = await store.asearch(namespace, query=state["message"], limit=2)
    return {"recalled": [hit.value["text"] for hit in hits]}


def _graph(node, store: EngramStore):
    builder = StateGraph(ChatState)
    builder.add_node("memory", node)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", END)
    return builder.compile(store=store)


def _embed_everything() -> None:
    memory_embed_pending(
        memory_ids=[str(pk) for pk in MemoryRow.objects.values_list("pk", flat=True)]
    )


def _start(user_id: str, message: str) -> ChatState:
    return {"user_id": user_id, "message": message, "recalled": []}


def test_a_graph_remembers_in_one_run_and_recalls_in_the_next(make_store, live_server, agent_key):
    first_run = _graph(remember_or_recall, make_store())
    for user_id, message in [
        ("ada", "remember: The staging database runs PostgreSQL 18"),
        ("ada", "remember: Deploys to production happen on Tuesdays"),
        ("bob", "remember: The staging database is MySQL for bob's team"),
    ]:
        first_run.invoke(_start(user_id, message))
    _embed_everything()

    second_run = _graph(remember_or_recall, make_store())  # a new store, as a new process has
    ada = second_run.invoke(_start("ada", "which database does staging run?"))
    bob = second_run.invoke(_start("bob", "which database does staging run?"))
    with Engram(live_server.url, agent_key) as engram:
        recalled = [hit.memory.text for hit in engram.recall("staging database", limit=5).hits]

    assert ada["recalled"][0] == "The staging database runs PostgreSQL 18"
    assert set(ada["recalled"]) <= {
        "The staging database runs PostgreSQL 18",
        "Deploys to production happen on Tuesdays",
    }
    assert bob["recalled"] == ["The staging database is MySQL for bob's team"]
    assert MemoryRow.objects.filter(subject_id="langgraph-agent").count() == 3
    assert "The staging database runs PostgreSQL 18" in recalled  # plain recall sees them too


def test_an_async_graph_runs_the_store_through_abatch(make_store):
    async def scenario():
        first = _graph(aremember_or_recall, make_store())
        await first.ainvoke(_start("ada", "remember: The on-call rotation changes on Mondays"))
        await first.ainvoke(_start("ada", "remember: Lunch is at noon"))
        second = _graph(aremember_or_recall, make_store())
        return await second.ainvoke(_start("ada", "when does the on-call rotation change?"))

    answer = asyncio.run(scenario())

    assert answer["recalled"][0] == "The on-call rotation changes on Mondays"
    assert all(
        {"langgraph", "lg:memories", "lg:memories.ada"} <= set(tags)
        for tags in MemoryRow.objects.values_list("tags", flat=True)
    )


def test_one_store_serves_event_loops_in_turn_and_a_worker_threads_loop(make_store):
    store = make_store()
    namespace = ("prefs", "ada")
    found: list[Item | None] = []
    failures: list[BaseException] = []

    asyncio.run(store.aput(namespace, "editor", {"text": "Ada edits in Helix"}))
    first = asyncio.run(store.aget(namespace, "editor"))

    def in_a_thread() -> None:
        try:
            asyncio.run(store.aput(namespace, "editor", {"text": "Ada edits in Zed"}))
            found.append(asyncio.run(store.aget(namespace, "editor")))
        except BaseException as error:
            failures.append(error)

    # A daemon thread joined with a bound: a client that mixes loops can hang, not just fail.
    thread = threading.Thread(target=in_a_thread, daemon=True)
    thread.start()
    thread.join(timeout=60)
    listed = asyncio.run(store.asearch(("prefs",)))
    asyncio.run(store.aclose())

    assert failures == []
    assert first is not None
    assert first.value == {"text": "Ada edits in Helix"}
    assert [item.value if item else None for item in found] == [{"text": "Ada edits in Zed"}]
    assert [(item.key, item.value) for item in listed] == [("editor", {"text": "Ada edits in Zed"})]
    assert MemoryRow.objects.filter(superseded_by__isnull=True).count() == 1


def test_get_put_overwrite_and_delete_keep_one_live_memory_per_key(make_store):
    store = make_store()
    namespace = ("prefs", "ada")

    store.put(namespace, "editor", {"text": "Ada uses vim", "since": 2019})
    first = store.get(namespace, "editor")
    store.put(namespace, "editor", {"text": "Ada switched to helix", "since": 2025})
    second = store.get(namespace, "editor")
    missing = store.get(namespace, "shell")

    assert first is not None
    assert second is not None
    assert (first.namespace, first.key, first.value) == (
        namespace,
        "editor",
        {"text": "Ada uses vim", "since": 2019},
    )
    assert second.value == {"text": "Ada switched to helix", "since": 2025}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert missing is None
    live = MemoryRow.objects.filter(superseded_by__isnull=True)
    assert list(live.values_list("text", "tags")) == [
        ("Ada switched to helix", item_tags(namespace, "editor"))
    ]
    assert MemoryRow.objects.count() == 2  # the first version kept as superseded history

    store.delete(namespace, "editor")

    assert store.get(namespace, "editor") is None
    assert MemoryRow.objects.count() == 0


def test_search_filters_pages_and_keeps_to_the_namespace_prefix(make_store):
    store = make_store()
    for n in range(5):
        store.put(("docs", "team-a"), f"doc-{n}", {"text": f"note {n}", "n": n, "kind": "note"})
    store.put(("docs", "team-b"), "doc-x", {"text": "note x", "n": 9, "kind": "note"})
    store.put(("other",), "doc-y", {"text": "note y", "n": 9, "kind": "note"})

    team_a = store.search(("docs", "team-a"), limit=10)
    everything_docs = store.search(("docs",), limit=10)
    big = store.search(("docs",), filter={"n": {"$gte": 3}}, limit=10)
    paged = store.search(("docs",), filter={"kind": "note"}, limit=2, offset=1)
    unfiltered_page = store.search(("docs",), limit=2, offset=1)
    past_one_page = store.search(("docs",), limit=250)
    by_query = store.search(("docs", "team-b"), query="note", limit=5)

    assert {item.key for item in team_a} == {f"doc-{n}" for n in range(5)}
    assert len(everything_docs) == 6
    assert sorted(item.value["n"] for item in big) == [3, 4, 9]
    assert [item.key for item in paged] == [item.key for item in everything_docs[1:3]]
    assert [item.key for item in unfiltered_page] == [item.key for item in everything_docs[1:3]]
    assert [item.key for item in past_one_page] == [item.key for item in everything_docs]
    assert [(item.namespace, item.key) for item in by_query] == [(("docs", "team-b"), "doc-x")]
    assert by_query[0].score is not None


def test_list_namespaces_with_prefix_suffix_and_depth(make_store):
    store = make_store()
    for namespace in [("users", "ada", "prefs"), ("users", "bob", "prefs"), ("users", "ada", "v1")]:
        store.put(namespace, "k", {"text": "x"})
    store.put(("teams", "core"), "k", {"text": "x"})

    everything = store.list_namespaces()
    users = store.list_namespaces(prefix=("users",))
    prefs = store.list_namespaces(suffix=("prefs",))
    wildcard = store.list_namespaces(prefix=("users", "*", "prefs"))
    shallow = store.list_namespaces(max_depth=2)
    paged = store.list_namespaces(limit=2, offset=1)
    both = store.batch(
        [
            ListNamespacesOp(
                match_conditions=(
                    MatchCondition("prefix", ("users",)),
                    MatchCondition("suffix", ("v1",)),
                )
            )
        ]
    )

    assert everything == [
        ("teams", "core"),
        ("users", "ada", "prefs"),
        ("users", "ada", "v1"),
        ("users", "bob", "prefs"),
    ]
    assert users == everything[1:]
    assert prefs == [("users", "ada", "prefs"), ("users", "bob", "prefs")]
    assert wildcard == prefs
    assert shallow == [("teams", "core"), ("users", "ada"), ("users", "bob")]
    assert paged == everything[1:3]
    assert both == [[("users", "ada", "v1")]]


def test_namespaces_the_store_cannot_hold_are_refused_before_any_write(make_store):
    store = make_store()

    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(tuple(f"level{n}" for n in range(48)), "k", {"text": "x"})

    assert MemoryRow.objects.count() == 0


def test_long_namespaces_are_tagged_by_digest_and_still_found(make_store):
    store = make_store()
    namespace = ("a" * 40, "b" * 40)

    store.put(namespace, "k", {"text": "deep"})

    assert namespace_tag(namespace).startswith("lg#")
    assert [item.key for item in store.search((namespace[0],))] == ["k"]
    assert store.get(namespace, "k") is not None


@pytest.mark.parametrize("concurrency", [1, 2])
def test_abatch_never_has_more_than_max_concurrency_requests_in_flight(
    settings, live_server, agent_key, concurrency
):
    # The server refuses the agent's request past the cap, and this client never retries: any
    # moment with more than `concurrency` of the batch's requests in flight fails the batch.
    settings.SUBJECT_MAX_IN_FLIGHT = concurrency
    puts = [PutOp(("bounded",), f"item-{n}", {"text": f"fact {n}"}) for n in range(12)]

    async def scenario() -> None:
        async with AsyncEngram(live_server.url, agent_key, max_retries=0) as client:
            store = EngramStore(
                live_server.url, agent_key, async_client=client, max_concurrency=concurrency
            )
            try:
                await store.abatch(puts)
            finally:
                store.close()

    asyncio.run(scenario())
    assert MemoryRow.objects.filter(tags__contains=[namespace_tag(("bounded",))]).count() == 12


def test_max_concurrency_must_allow_a_request():
    with pytest.raises(ValueError, match="max_concurrency"):
        EngramStore("http://127.0.0.1:1", "key", max_concurrency=0)
