"""``AsyncEngram`` against a live server: the same operations, awaited."""

import asyncio
import gc
import threading
import warnings

import pytest
from engram_client import (
    AsyncEngram,
    InvalidRequestError,
    Memory,
    NewTurn,
    NotFoundError,
    SessionTurn,
)

from apps.memory.models import Memory as MemoryRow
from apps.memory.models import SessionMemory
from apps.memory.services import memory_embed_pending

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def test_the_async_client_writes_recalls_pages_and_forgets(live_server, issue_key, tenant):
    key = issue_key(tenant, "agent-a")

    async def scenario():
        async with AsyncEngram(live_server.url, key) as engram:
            memory = await engram.remember("The user prefers tabs")
            written = await engram.remember_many(
                [f"fact {n}" for n in range(210)] + [NewTurn(session_id="s", content="hi")]
            )
            await asyncio.to_thread(memory_embed_pending, memory_ids=[str(memory.id)])
            recalled = await engram.recall("tabs or spaces?", limit=3, mode="semantic")
            every = [item async for item in engram.memories(page_size=100)]
            turns = [turn async for turn in engram.session_turns("s")]
            me = await engram.whoami()
            await engram.forget(memory.id)
            with pytest.raises(NotFoundError) as missing:
                await engram.forget(memory.id)
            return memory, written, recalled, every, turns, me, missing.value

    memory, written, recalled, every, turns, me, missing = asyncio.run(scenario())

    assert isinstance(memory, Memory)
    assert [type(item) for item in written[-2:]] == [Memory, SessionTurn]
    assert recalled.hits[0].memory.id == memory.id
    assert len(every) == 211
    assert len({item.id for item in every}) == 211
    assert [turn.content for turn in turns] == ["hi"]
    assert me.subject_id == "agent-a"
    assert missing.code == "not_found"
    assert MemoryRow.objects.count() == 210


def test_the_async_client_appends_pops_and_clears_a_session(live_server, issue_key, tenant):
    key = issue_key(tenant, "agent-a")

    async def scenario():
        async with AsyncEngram(live_server.url, key) as engram:
            for n in range(3):
                await engram.session_append("s", f"turn {n}", role="assistant")
            popped = await engram.session_pop("s")
            first = (await engram.session_history("s", limit=1)).data[0]
            deleted = await engram.session_delete_turn("s", first.seq)
            cleared = await engram.session_clear("s")
            return popped, deleted, cleared, await engram.session_pop("s")

    popped, deleted, cleared, empty = asyncio.run(scenario())

    assert popped is not None
    assert (popped.role, popped.content) == ("assistant", "turn 2")
    assert deleted.content == "turn 0"
    assert cleared.deleted == 1
    assert empty is None
    assert SessionMemory.objects.count() == 0


# ----------------------------------------------------------------------------- event loops


def _unclosed_connections(caught: list[warnings.WarningMessage]) -> list[str]:
    """asyncio's and socket's warnings for a connection left open (other objects warn too)."""
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, ResourceWarning) and str(w.message).startswith("unclosed")
    ]


def test_one_client_serves_event_loops_in_turn_and_closes_each_at_its_end(
    live_server, issue_key, tenant
):
    engram = AsyncEngram(live_server.url, issue_key(tenant, "agent-a"))

    async def append(content):
        return (await engram.session_append("loops", content)).content

    gc.collect()  # what earlier tests left behind warns now, not inside the block
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        first = asyncio.run(append("first loop"))
        second = asyncio.run(append("second loop"))
        history = asyncio.run(engram.session_history("loops"))
        asyncio.run(engram.aclose())
        gc.collect()

    assert (first, second) == ("first loop", "second loop")
    assert [turn.content for turn in history.data] == ["first loop", "second loop"]
    assert _unclosed_connections(caught) == []


def test_one_client_serves_worker_threads_loops_at_once(live_server, issue_key, tenant):
    engram = AsyncEngram(live_server.url, issue_key(tenant, "agent-a"))
    asyncio.run(engram.session_append("main", "from the main thread"))
    ready = threading.Barrier(3)
    failures: list[BaseException] = []

    async def append_three(session_id):
        ready.wait()  # every thread's loop starts its requests together
        for n in range(3):
            await engram.session_append(session_id, f"turn {n}")

    def run(session_id):
        try:
            asyncio.run(append_three(session_id))
        except BaseException as error:
            failures.append(error)

    # Daemon threads joined with a bound: a client that mixes loops can hang, not just fail.
    threads = [threading.Thread(target=run, args=(f"thread-{n}",), daemon=True) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    contents = {
        session_id: [turn.content for turn in asyncio.run(engram.session_history(session_id)).data]
        for session_id in ["main", "thread-0", "thread-1", "thread-2"]
    }
    asyncio.run(engram.aclose())

    assert [thread.is_alive() for thread in threads] == [False, False, False]
    assert failures == []
    assert contents == {
        "main": ["from the main thread"],
        "thread-0": ["turn 0", "turn 1", "turn 2"],
        "thread-1": ["turn 0", "turn 1", "turn 2"],
        "thread-2": ["turn 0", "turn 1", "turn 2"],
    }
    assert SessionMemory.objects.count() == 10


def test_the_async_client_filters_recall_and_list_and_embeds_now(live_server, issue_key, tenant):
    key = issue_key(tenant, "agent-a")

    async def scenario():
        async with AsyncEngram(live_server.url, key) as engram:
            kept = await engram.remember(
                "deploys happen on friday", tags=["ops"], metadata={"n": 2}, embed_now=True
            )
            await engram.remember("deploys of the docs", tags=["docs"], metadata={"n": 9})
            recalled = await engram.recall(
                "deploys", mode="hybrid", filter={"metadata": {"n": {"$lt": 5}}}
            )
            listed = [item async for item in engram.memories(filter={"tags": {"$in": ["ops"]}})]
            with pytest.raises(InvalidRequestError) as refused:
                await engram.recall("deploys", filter={"tags": {"$gt": "a"}})
            return kept, recalled, listed, refused.value

    kept, recalled, listed, refused = asyncio.run(scenario())

    assert kept.embedding_status == "ready"
    assert [hit.memory.id for hit in recalled.hits] == [kept.id]
    assert [item.id for item in listed] == [kept.id]
    assert refused.code == "invalid_filter"
