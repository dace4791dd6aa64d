"""``AsyncEngram`` against a live server: the same operations, awaited."""

import asyncio

import pytest
from engram_client import AsyncEngram, Memory, NewTurn, NotFoundError, SessionTurn

from apps.memory.models import Memory as MemoryRow
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
