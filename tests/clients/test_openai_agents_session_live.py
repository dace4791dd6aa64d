"""``EngramSession`` as the OpenAI Agents SDK's ``Session``, against a live Engram server."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message
from engram_client import AsyncEngram, InvalidRequestError, RateLimitedError
from engram_client.openai_agents import EngramSession

from apps.memory.models import SessionMemory

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

USER: Any = {"role": "user", "content": "Our staging database runs PostgreSQL 18."}
ASSISTANT: Any = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Noted: staging is on 18.", "annotations": []}],
}
TOOL_CALL: Any = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "lookup_version",
    "arguments": '{"service": "staging"}',
}
TOOL_OUTPUT: Any = {"type": "function_call_output", "call_id": "call_1", "output": "18.1"}


CONFIG = RunConfig(tracing_disabled=True)
STAGING_REPLIES = ("Noted, staging runs PostgreSQL 18.", "It runs PostgreSQL 18.")


@pytest.fixture
def agent_key(issue_key, tenant):
    return issue_key(tenant, "agents-sdk")


@pytest.fixture
def with_client(live_server, agent_key) -> Callable[..., Any]:
    """``with_client(scenario)`` awaits ``scenario(client)`` in an event loop of its own, with
    an ``AsyncEngram`` of the agent's key (at ``url``, the live server unless given)."""

    def run(
        scenario: Callable[[AsyncEngram], Awaitable[Any]], *, url: str | None = None, **options
    ) -> Any:
        async def main() -> Any:
            async with AsyncEngram(url or live_server.url, agent_key, **options) as client:
                return await scenario(client)

        return asyncio.run(main())

    return run


def ops_agent(*replies: str) -> tuple[Agent[Any], ScriptedModel]:
    """An agent whose model answers each call with the next reply and keeps what it was sent."""
    model = ScriptedModel(
        [[assistant_message(reply, item_id=f"msg_{n}")] for n, reply in enumerate(replies)]
    )
    return Agent(name="ops", instructions="Answer briefly.", model=model), model


def messages(count: int) -> list[Any]:
    return [{"role": "user", "content": f"message {n}"} for n in range(count)]


def _rows(session_id: str, subject_id: str = "agents-sdk"):
    return list(
        SessionMemory.objects.filter(subject_id=subject_id, session_id=session_id)
        .order_by("seq")
        .values_list("role", "content")
    )


def test_the_session_adds_reads_back_in_order_pops_and_clears(with_client):
    async def scenario(client):
        session = EngramSession("chat-1", client)
        await session.add_items([USER, ASSISTANT, TOOL_CALL, TOOL_OUTPUT])
        everything = await session.get_items()
        latest_two = await session.get_items(limit=2)
        stored = await asyncio.to_thread(_rows, "chat-1")
        popped = await session.pop_item()
        after_pop = await session.get_items()
        await session.clear_session()
        return (
            isinstance(session, Session),
            everything,
            latest_two,
            stored,
            popped,
            after_pop,
            await session.get_items(),
            await session.pop_item(),
        )

    (is_session, everything, latest_two, stored, popped, after_pop, cleared, empty_pop) = (
        with_client(scenario)
    )

    assert is_session
    assert everything == [USER, ASSISTANT, TOOL_CALL, TOOL_OUTPUT]
    assert latest_two == [TOOL_CALL, TOOL_OUTPUT]
    assert stored == [
        ("user", "Our staging database runs PostgreSQL 18."),
        ("assistant", "Noted: staging is on 18."),
        ("system", json.dumps(TOOL_CALL, separators=(",", ":"))),
        ("system", json.dumps(TOOL_OUTPUT, separators=(",", ":"))),
    ]
    assert popped == TOOL_OUTPUT
    assert after_pop == [USER, ASSISTANT, TOOL_CALL]
    assert (cleared, empty_pop) == ([], None)
    assert _rows("chat-1") == []


def test_clearing_leaves_another_subjects_session_of_the_same_id(
    live_server, agent_key, issue_key, tenant
):
    other_key = issue_key(tenant, "someone-else")

    async def scenario():
        async with (
            AsyncEngram(live_server.url, agent_key) as mine,
            AsyncEngram(live_server.url, other_key) as theirs,
        ):
            await EngramSession("shared-id", theirs).add_items([USER])
            session = EngramSession("shared-id", mine)
            await session.add_items([USER, ASSISTANT])
            cleared = await session.clear()
            popped = await session.pop_item()
            return cleared.deleted, popped, await EngramSession("shared-id", theirs).get_items()

    deleted, popped, theirs = asyncio.run(scenario())

    assert (deleted, popped) == (2, None)
    assert theirs == [USER]
    assert _rows("shared-id", "someone-else") == [("user", USER["content"])]


def test_latest_items_past_one_page_and_large_items_round_trip(with_client, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 10_000
    big: Any = {"role": "user", "content": "x" * 20_000}
    many = messages(1_204)

    async def scenario(client):
        session = EngramSession("long", client, session_settings={"limit": 3})
        await session.add_items([*many, big])
        return (
            await session.get_items(),
            await session.get_items(limit=1_100),
            len(await session.get_items(limit=10_000)),
        )

    default_limit, latest, total = with_client(scenario)

    assert default_limit == [many[-2], many[-1], big]
    assert latest == [*many[-1_099:], big]
    assert total == 1_205
    row = SessionMemory.objects.get(session_id="long", content__startswith="{")
    assert (len(row.content), row.metadata) == (
        len(json.dumps(big, separators=(",", ":"))),
        {"openai_agents": {"in_content": True}},
    )


def test_turns_written_elsewhere_read_back_as_messages(with_client):
    async def scenario(client):
        await client.session_append("hook", "I prefer short answers.", role="user")
        await client.session_append("hook", "The user is in Lisbon.", role="fact")
        return await EngramSession("hook", client).get_items()

    assert with_client(scenario) == [
        {"role": "user", "content": "I prefer short answers."},
        {"role": "system", "content": "The user is in Lisbon."},
    ]


def test_runner_keeps_the_conversation_in_engram_across_runs_then_promotes(with_client):
    agent, model = ops_agent(*STAGING_REPLIES)

    async def scenario(client):
        first = await Runner.run(
            agent,
            "Remember that our staging database runs PostgreSQL 18.",
            session=EngramSession("ops-chat", client),
            run_config=CONFIG,
        )
        # A new session object, as a new process would make: the history is Engram's.
        session = EngramSession("ops-chat", client)
        second = await Runner.run(
            agent, "Which PostgreSQL does staging run?", session=session, run_config=CONFIG
        )
        return first, second, await session.get_items(), await session.promote()

    first, second, items, promotion = with_client(scenario)

    assert (first.final_output, second.final_output) == STAGING_REPLIES
    second_input = model.calls[1].input
    assert [item.get("role") for item in second_input] == ["user", "assistant", "user"]
    assert second_input[0]["content"] == "Remember that our staging database runs PostgreSQL 18."
    assert [item["role"] for item in items] == ["user", "assistant", "user", "assistant"]
    assert _rows("ops-chat") == [
        ("user", "Remember that our staging database runs PostgreSQL 18."),
        ("assistant", "Noted, staging runs PostgreSQL 18."),
        ("user", "Which PostgreSQL does staging run?"),
        ("assistant", "It runs PostgreSQL 18."),
    ]
    assert (promotion.session_id, promotion.reason, promotion.enqueued) == (
        "ops-chat",
        "enqueued",
        True,
    )


def test_one_session_serves_one_event_loop_after_another(live_server, agent_key):
    session = EngramSession("loops", base_url=live_server.url, api_key=agent_key)

    asyncio.run(session.add_items([USER, ASSISTANT]))
    popped = asyncio.run(session.pop_item())
    items: list[Any] = asyncio.run(session.get_items())
    asyncio.run(session.aclose())

    assert popped == ASSISTANT
    assert items == [USER]
    assert _rows("loops") == [("user", USER["content"])]


def test_run_sync_in_worker_threads_shares_one_session(live_server, agent_key):
    agent, model = ops_agent(*STAGING_REPLIES)
    session = EngramSession("threaded", base_url=live_server.url, api_key=agent_key)
    answers: list[Any] = []
    failures: list[BaseException] = []

    def run(message: str) -> None:
        try:
            result = Runner.run_sync(agent, message, session=session, run_config=CONFIG)
            answers.append(result.final_output)
        except BaseException as error:
            failures.append(error)

    # Each thread's run_sync drives its own event loop; daemon threads joined with a bound,
    # because a client that mixes loops can hang rather than fail.
    for message in ["Staging runs PostgreSQL 18.", "Which PostgreSQL does staging run?"]:
        thread = threading.Thread(target=run, args=(message,), daemon=True)
        thread.start()
        thread.join(timeout=60)
    items: list[Any] = asyncio.run(session.get_items())
    asyncio.run(session.aclose())

    assert failures == []
    assert answers == list(STAGING_REPLIES)
    assert [item.get("role") for item in model.calls[1].input] == ["user", "assistant", "user"]
    assert [item["role"] for item in items] == ["user", "assistant", "user", "assistant"]
    assert _rows("threaded") == [
        ("user", "Staging runs PostgreSQL 18."),
        ("assistant", "Noted, staging runs PostgreSQL 18."),
        ("user", "Which PostgreSQL does staging run?"),
        ("assistant", "It runs PostgreSQL 18."),
    ]


def test_an_empty_session_id_is_refused_not_replaced(live_server, agent_key):
    with pytest.raises(InvalidRequestError) as refused:
        EngramSession("", base_url=live_server.url, api_key=agent_key)
    unnamed = EngramSession(base_url=live_server.url, api_key=agent_key)

    assert (refused.value.status, refused.value.code) == (None, "invalid_session_id")
    assert unnamed.session_id.startswith("agents-")
    assert SessionMemory.objects.count() == 0


def _batches(proxy) -> list[tuple[int | None, int, str]]:
    """Each request the proxy relayed: its status, how many items it carried, and its key."""
    assert {seen.request_line for seen in proxy.seen} == {"POST /api/v1/memory/batch HTTP/1.1"}
    return [
        (seen.status, len(json.loads(seen.body)["items"]), seen.headers["idempotency-key"])
        for seen in proxy.seen
    ]


def _bulk_add(with_client, proxy, items: list[Any], **options) -> None:
    """One ``add_items`` of ``items`` to the session ``bulk``, through the proxy."""

    async def scenario(client):
        await EngramSession("bulk", client).add_items(items)

    with_client(scenario, url=proxy.url, **options)


def _retries_resend_the_batch_before_them(batches) -> bool:
    """Every 429 is followed by the same batch again (same size, same Idempotency-Key)."""
    return (
        all(
            status != 429 or batches[n + 1][1:] == (size, key)
            for n, (status, size, key) in enumerate(batches[:-1])
        )
        and batches[-1][0] == 201
    )


def test_a_bulk_add_is_sent_in_the_servers_largest_batches_in_order(with_client, proxy, settings):
    # Two full batches fit one window, the third waits for the next.
    settings.MEMORY_WRITE_RATE_LIMIT = 1_000
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 2
    many = messages(1_200)

    _bulk_add(with_client, proxy, many)

    batches = _batches(proxy)
    refused = [size for status, size, _key in batches if status == 429]
    assert [size for status, size, _key in batches if status == 201] == [500, 500, 200]
    assert {status for status, _size, _key in batches} <= {201, 429}
    assert len(batches) == math.ceil(1_200 / 500) + len(refused)
    assert _retries_resend_the_batch_before_them(batches)
    assert [content for _role, content in _rows("bulk")] == [item["content"] for item in many]


def test_a_bulk_add_past_a_write_rate_below_one_batch_shrinks_its_batches(
    with_client, proxy, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 300
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 1
    many = messages(1_200)

    _bulk_add(with_client, proxy, many)

    batches = _batches(proxy)
    refused = [size for status, size, _key in batches[1:] if status == 429]
    # 500 is more than any window admits: refused once, not retried, and split.
    assert batches[0][:2] == (429, 500)
    assert [size for status, size, _key in batches if status == 201] == [300, 300, 300, 300]
    assert {status for status, _size, _key in batches} <= {201, 429}
    assert len(batches) == 1 + math.ceil(1_200 / 300) + len(refused)
    assert _retries_resend_the_batch_before_them(batches[1:])
    assert [content for _role, content in _rows("bulk")] == [item["content"] for item in many]


def test_a_bulk_add_still_limited_after_the_retries_raises_and_keeps_earlier_batches(
    with_client, proxy, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 500
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 3
    many = messages(600)

    # Windows are fixed (aligned to multiples of their length): start at the top of one so
    # both batches fall inside it however slow the machine is.
    time.sleep(3 - time.time() % 3)
    with pytest.raises(RateLimitedError) as limited:
        _bulk_add(with_client, proxy, many, max_retries=0)

    assert [(status, size) for status, size, _key in _batches(proxy)] == [(201, 500), (429, 100)]
    assert (limited.value.code, limited.value.details["limit"]) == ("rate_limited", 500)
    assert [content for _role, content in _rows("bulk")] == [item["content"] for item in many[:500]]
