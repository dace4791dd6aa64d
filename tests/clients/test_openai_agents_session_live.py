"""``EngramSession`` as the OpenAI Agents SDK's ``Session``, against a live Engram server."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.memory import Session
from agents.models.interface import Model
from agents.usage import Usage
from engram_client import AsyncEngram, InvalidRequestError, RateLimitedError
from engram_client.openai_agents import EngramSession
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from typing_extensions import override

from apps.memory.models import SessionMemory
from tests.clients.session_ids import SESSION_IDS

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


class ScriptedModel(Model):
    """A model (the SDK's ``Model`` interface) that answers each call with the next reply and
    keeps the input it was given, so a test sees what history the run sent."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.inputs: list[list[Any]] = []

    @override
    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        *,
        previous_response_id,
        conversation_id,
        prompt,
    ) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else list(input))
        message = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}",
            type="message",
            role="assistant",
            status="completed",
            content=[
                ResponseOutputText(type="output_text", text=self.replies.pop(0), annotations=[])
            ],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    @override
    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@pytest.fixture
def agent_key(issue_key, tenant):
    return issue_key(tenant, "agents-sdk")


def _rows(session_id: str, subject_id: str = "agents-sdk"):
    return list(
        SessionMemory.objects.filter(subject_id=subject_id, session_id=session_id)
        .order_by("seq")
        .values_list("role", "content")
    )


def test_the_session_adds_reads_back_in_order_pops_and_clears(live_server, agent_key):
    async def scenario():
        async with AsyncEngram(live_server.url, agent_key) as client:
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
        asyncio.run(scenario())
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


def test_latest_items_past_one_page_and_large_items_round_trip(live_server, agent_key, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 10_000
    big: Any = {"role": "user", "content": "x" * 20_000}
    many: list[Any] = [{"role": "user", "content": f"message {n}"} for n in range(1_204)]

    async def scenario():
        async with AsyncEngram(live_server.url, agent_key) as client:
            session = EngramSession("long", client, session_settings={"limit": 3})
            await session.add_items([*many, big])
            return (
                await session.get_items(),
                await session.get_items(limit=1_100),
                len(await session.get_items(limit=10_000)),
            )

    default_limit, latest, total = asyncio.run(scenario())

    assert default_limit == [many[-2], many[-1], big]
    assert latest == [*many[-1_099:], big]
    assert total == 1_205
    row = SessionMemory.objects.get(session_id="long", content__startswith="{")
    assert (len(row.content), row.metadata) == (
        len(json.dumps(big, separators=(",", ":"))),
        {"openai_agents": {"in_content": True}},
    )


def test_turns_written_elsewhere_read_back_as_messages(live_server, agent_key):
    async def scenario():
        async with AsyncEngram(live_server.url, agent_key) as client:
            await client.session_append("hook", "I prefer short answers.", role="user")
            await client.session_append("hook", "The user is in Lisbon.", role="fact")
            return await EngramSession("hook", client).get_items()

    assert asyncio.run(scenario()) == [
        {"role": "user", "content": "I prefer short answers."},
        {"role": "system", "content": "The user is in Lisbon."},
    ]


def test_runner_keeps_the_conversation_in_engram_across_runs_then_promotes(live_server, agent_key):
    model = ScriptedModel("Noted, staging runs PostgreSQL 18.", "It runs PostgreSQL 18.")
    agent = Agent(name="ops", instructions="Answer briefly.", model=model)
    config = RunConfig(tracing_disabled=True)

    async def scenario():
        async with AsyncEngram(live_server.url, agent_key) as client:
            first = await Runner.run(
                agent,
                "Remember that our staging database runs PostgreSQL 18.",
                session=EngramSession("ops-chat", client),
                run_config=config,
            )
            # A new session object, as a new process would make: the history is Engram's.
            session = EngramSession("ops-chat", client)
            second = await Runner.run(
                agent, "Which PostgreSQL does staging run?", session=session, run_config=config
            )
            return first, second, await session.get_items(), await session.promote()

    first, second, items, promotion = asyncio.run(scenario())

    assert (first.final_output, second.final_output) == (
        "Noted, staging runs PostgreSQL 18.",
        "It runs PostgreSQL 18.",
    )
    second_input = model.inputs[1]
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
    model = ScriptedModel("Noted, staging runs PostgreSQL 18.", "It runs PostgreSQL 18.")
    agent = Agent(name="ops", instructions="Answer briefly.", model=model)
    config = RunConfig(tracing_disabled=True)
    session = EngramSession("threaded", base_url=live_server.url, api_key=agent_key)
    answers: list[Any] = []
    failures: list[BaseException] = []

    def run(message: str) -> None:
        try:
            result = Runner.run_sync(agent, message, session=session, run_config=config)
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
    assert answers == ["Noted, staging runs PostgreSQL 18.", "It runs PostgreSQL 18."]
    assert [item.get("role") for item in model.inputs[1]] == ["user", "assistant", "user"]
    assert [item["role"] for item in items] == ["user", "assistant", "user", "assistant"]
    assert _rows("threaded") == [
        ("user", "Staging runs PostgreSQL 18."),
        ("assistant", "Noted, staging runs PostgreSQL 18."),
        ("user", "Which PostgreSQL does staging run?"),
        ("assistant", "It runs PostgreSQL 18."),
    ]


@pytest.mark.parametrize(("_case", "session_id", "neighbour"), SESSION_IDS)
def test_any_printable_session_id_round_trips(live_server, agent_key, _case, session_id, neighbour):
    async def scenario():
        async with AsyncEngram(live_server.url, agent_key) as client:
            await EngramSession(neighbour, client).add_items([USER])
            session = EngramSession(session_id, client)
            await session.add_items([USER, ASSISTANT, TOOL_CALL])
            items = await session.get_items()
            popped = await session.pop_item()
            after_pop = await session.get_items()
            await session.clear_session()
            return items, popped, after_pop, await session.get_items(), await session.pop_item()

    items, popped, after_pop, cleared, empty_pop = asyncio.run(scenario())

    assert items == [USER, ASSISTANT, TOOL_CALL]
    assert popped == TOOL_CALL
    assert after_pop == [USER, ASSISTANT]
    assert (cleared, empty_pop) == ([], None)
    assert _rows(session_id) == []
    assert _rows(neighbour) == [("user", USER["content"])]


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


def _retries_resend_the_batch_before_them(batches) -> bool:
    """Every 429 is followed by the same batch again (same size, same Idempotency-Key)."""
    return (
        all(
            status != 429 or batches[n + 1][1:] == (size, key)
            for n, (status, size, key) in enumerate(batches[:-1])
        )
        and batches[-1][0] == 201
    )


def test_a_bulk_add_is_sent_in_the_servers_largest_batches_in_order(
    live_server, agent_key, proxy, settings
):
    # Two full batches fit one window, the third waits for the next.
    settings.MEMORY_WRITE_RATE_LIMIT = 1_000
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 2
    many: list[Any] = [{"role": "user", "content": f"message {n}"} for n in range(1_200)]

    async def scenario():
        async with AsyncEngram(proxy.url, agent_key) as client:
            await EngramSession("bulk", client).add_items(many)

    asyncio.run(scenario())

    batches = _batches(proxy)
    refused = [size for status, size, _key in batches if status == 429]
    assert [size for status, size, _key in batches if status == 201] == [500, 500, 200]
    assert {status for status, _size, _key in batches} <= {201, 429}
    assert len(batches) == math.ceil(1_200 / 500) + len(refused)
    assert _retries_resend_the_batch_before_them(batches)
    assert [content for _role, content in _rows("bulk")] == [item["content"] for item in many]


def test_a_bulk_add_past_a_write_rate_below_one_batch_shrinks_its_batches(
    live_server, agent_key, proxy, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 300
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 1
    many: list[Any] = [{"role": "user", "content": f"message {n}"} for n in range(1_200)]

    async def scenario():
        async with AsyncEngram(proxy.url, agent_key) as client:
            await EngramSession("bulk", client).add_items(many)

    asyncio.run(scenario())

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
    live_server, agent_key, proxy, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 500
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 3
    many: list[Any] = [{"role": "user", "content": f"message {n}"} for n in range(600)]

    async def scenario():
        async with AsyncEngram(proxy.url, agent_key, max_retries=0) as client:
            await EngramSession("bulk", client).add_items(many)

    # Windows are fixed (aligned to multiples of their length): start at the top of one so
    # both batches fall inside it however slow the machine is.
    time.sleep(3 - time.time() % 3)
    with pytest.raises(RateLimitedError) as limited:
        asyncio.run(scenario())

    assert [(status, size) for status, size, _key in _batches(proxy)] == [(201, 500), (429, 100)]
    assert (limited.value.code, limited.value.details["limit"]) == ("rate_limited", 500)
    assert [content for _role, content in _rows("bulk")] == [item["content"] for item in many[:500]]
