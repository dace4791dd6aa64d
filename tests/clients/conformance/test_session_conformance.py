"""``EngramSession`` against the Agents SDK's ``SQLiteSession``: the same calls, the same answers.

Each case is modelled on a test of the SDK's own suite (``tests/memory/test_session.py`` and
``tests/memory/test_session_limit.py`` in openai/openai-agents-python), named in its docstring,
and compares what the two sessions return. Items are compared whole: a session must give back
exactly what it was given.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.memory import SessionSettings
from agents.testing import ScriptedModel, assistant_message
from engram_client import InvalidRequestError

from tests.clients.session_ids import SESSION_IDS

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

CONFIG = RunConfig(tracing_disabled=True)

CONVERSATION: list[Any] = [
    {"role": "user", "content": "Message 1"},
    {"role": "assistant", "content": "Response 1"},
    {"role": "user", "content": "Message 2"},
    {"role": "assistant", "content": "Response 2"},
    {"role": "user", "content": "Message 3"},
    {"role": "assistant", "content": "Response 3"},
]

#: One item of each kind a run writes: messages, a tool call and its output, reasoning.
RUN_ITEMS: list[Any] = [
    {"role": "user", "content": "Which PostgreSQL does staging run?"},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Look the version up."}],
    },
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "lookup_version",
        "arguments": '{"service": "staging"}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "18.1"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Staging runs 18.1.", "annotations": []}],
    },
]


def test_items_read_back_as_added_then_clear(sessions):
    """Modelled on ``test_sqlite_session_memory_direct``, with every item kind a run writes."""

    async def scenario(make):
        session = make("direct")
        await session.add_items(RUN_ITEMS)
        everything = await session.get_items()
        await session.clear_session()
        return everything, await session.get_items()

    reference, engram = sessions.run(scenario)

    assert engram == reference == (RUN_ITEMS, [])


def test_an_empty_add_is_a_no_op_and_adds_keep_their_order(sessions):
    """Modelled on ``test_async_sqlite_session_add_empty_items_list`` and the ordering tests
    (``…same_timestamp_consistent_order``, ``…pop_item_same_timestamp_returns_latest``) of the
    SDK's ``tests/extensions/memory/test_async_sqlite_session.py``, with items that have
    nothing to read as text (a bare reasoning item, a message with no content parts)."""
    older: Any = {"id": "older", "role": "user", "content": "old"}
    reasoning: Any = {"id": "rs_bare", "type": "reasoning"}
    empty_message: Any = {"id": "msg_empty", "type": "message", "role": "assistant", "content": []}

    async def scenario(make):
        session = make("order")
        await session.add_items([])
        seen: list[Any] = [await session.get_items()]
        await session.add_items([older])
        await session.add_items([reasoning, empty_message])
        seen += [await session.get_items(), await session.get_items(limit=2)]
        seen += [await session.pop_item(), await session.get_items()]
        return seen

    reference, engram = sessions.run(scenario)

    assert engram == reference
    assert reference == [
        [],
        [older, reasoning, empty_message],
        [reasoning, empty_message],
        empty_message,
        [older, reasoning],
    ]


def test_pop_item_returns_the_latest_until_the_session_is_empty(sessions):
    """Modelled on ``test_sqlite_session_memory_pop_item``."""

    async def scenario(make):
        session = make("pop")
        steps: list[Any] = [await session.pop_item(), await session.get_items()]
        await session.add_items(CONVERSATION[:3])
        for _ in range(4):
            steps.append(await session.pop_item())
        steps.append(await session.get_items())
        return steps

    reference, engram = sessions.run(scenario)

    assert engram == reference == [None, [], *reversed(CONVERSATION[:3]), None, []]


def test_pop_and_clear_touch_only_their_own_session(sessions):
    """Modelled on ``test_session_memory_pop_different_sessions``, with a clear as well."""

    async def scenario(make):
        first, second, third = make("session_1"), make("session_2"), make("session_3")
        await first.add_items(CONVERSATION[:1])
        await second.add_items(CONVERSATION[2:4])
        await third.add_items(CONVERSATION[4:])
        popped = await second.pop_item()
        await third.clear_session()
        return popped, [await each.get_items() for each in (first, second, third)]

    reference, engram = sessions.run(scenario)

    assert engram == reference == (CONVERSATION[3], [CONVERSATION[:1], CONVERSATION[2:3], []])


def test_get_items_with_a_limit_returns_the_latest_in_order(sessions):
    """Modelled on ``test_sqlite_session_get_items_with_limit``."""

    async def scenario(make):
        session = make("limits")
        await session.add_items(CONVERSATION)
        return {limit: await session.get_items(limit=limit) for limit in [None, 2, 4, 10, 0]}

    reference, engram = sessions.run(scenario)

    assert (
        engram
        == reference
        == {
            None: CONVERSATION,
            2: CONVERSATION[-2:],
            4: CONVERSATION[-4:],
            10: CONVERSATION,
            0: [],
        }
    )


def test_a_negative_limit_returns_nothing(sessions):
    """Listed difference (docs/client.md, "Conformance"), from
    ``test_session_limit_negative_returns_empty``: a negative limit returns no items, as the
    SDK's Redis, MongoDB and Dapr sessions and its newer ``SQLiteSession`` do; the installed
    ``SQLiteSession`` returns the whole conversation."""

    async def scenario(make):
        session = make("negative")
        await session.add_items(CONVERSATION)
        return await session.get_items(limit=-1)

    reference, engram = sessions.run(scenario)

    assert reference == CONVERSATION
    assert engram == []


def test_session_settings_limit_is_the_default_and_an_explicit_limit_wins(sessions):
    """Modelled on ``test_session_settings_default``, ``test_session_settings_constructor``,
    ``test_get_items_uses_session_settings_limit`` and
    ``test_get_items_explicit_limit_overrides_session_settings``."""
    items: list[Any] = [{"role": "user", "content": f"Message {n}"} for n in range(10)]

    async def scenario(make):
        plain = make("no-settings")
        limited = make("settings", session_settings=SessionSettings(limit=3))
        from_dict = make("settings-dict", session_settings={"limit": 5})
        await limited.add_items(items)
        return (
            [each.session_settings.limit for each in (plain, limited, from_dict)],
            await limited.get_items(),
            await limited.get_items(limit=2),
        )

    reference, engram = sessions.run(scenario)

    assert engram == reference == ([None, 3, 5], items[-3:], items[-2:])


def test_unicode_and_sql_like_content_round_trip(sessions):
    """Modelled on ``test_sqlite_session_unicode_content`` and
    ``test_sqlite_session_special_characters_and_sql_injection``."""
    items: list[Any] = [
        {"role": "user", "content": text}
        for text in [
            "こんにちは",
            "😊👍",
            "Привет",
            "O'Reilly",
            "DROP TABLE sessions;",
            '"SELECT * FROM users WHERE name = "admin";"',
            "Robert'); DROP TABLE students;--",
            "",
            "   ",
            "line one\nline two\ttabbed",
        ]
    ]

    async def scenario(make):
        session = make("special")
        await session.add_items(items)
        return await session.get_items()

    reference, engram = sessions.run(scenario)

    assert engram == reference == items


def test_writes_from_threads_each_running_its_own_event_loop(sessions):
    """Modelled on ``test_sqlite_session_concurrent_access``: five threads, each with a new
    event loop, add to one session object; every item is kept (in whatever order the threads
    ran, so the comparison is of the set, as upstream's)."""
    items: list[Any] = [{"role": "user", "content": f"Message {n}"} for n in range(10)]

    def contents(make) -> set[str]:
        session = make("threads")

        def add(item: Any) -> None:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(session.add_items([item]))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
            list(pool.map(add, items))
        return {item["content"] for item in asyncio.run(session.get_items())}

    reference, engram = sessions.call(contents)

    assert engram == reference == {f"Message {n}" for n in range(10)}


def test_one_session_serves_one_asyncio_run_after_another(sessions):
    """Each call in an event loop of its own (a script calling ``asyncio.run`` per step), the
    way ``test_sqlite_session_memory_direct``'s calls would run outside an async test."""

    def steps(make) -> list[Any]:
        session = make("loops")
        asyncio.run(session.add_items(CONVERSATION[:2]))
        asyncio.run(session.add_items(CONVERSATION[2:4]))
        return [
            asyncio.run(session.pop_item()),
            asyncio.run(session.get_items()),
            asyncio.run(session.get_items(limit=1)),
        ]

    reference, engram = sessions.call(steps)

    assert engram == reference == [CONVERSATION[3], CONVERSATION[:3], CONVERSATION[2:3]]


def test_session_ids_of_any_printable_text_name_their_own_session(sessions):
    """No SDK test names sessions this way; ``SQLiteSession`` keys rows by the id as given, so
    every printable id (``/``, ``.``, ``..``, ``%``, spaces, any script) must name one session
    and leave the session its unescaped URL would reach alone."""

    async def one_id(make, session_id: str, neighbour: str) -> Any:
        session = make(session_id)
        await session.add_items(CONVERSATION[:3])
        popped = await session.pop_item()
        seen = (popped, await session.get_items(), await make(neighbour).get_items())
        await session.clear_session()
        return seen, await session.get_items()

    async def scenario(make):
        for neighbour in {neighbour for _case, _id, neighbour in SESSION_IDS}:
            await make(neighbour).add_items(CONVERSATION[:1])
        # The ids side by side at once: none may reach another's session either.
        seen = await asyncio.gather(*(one_id(make, id_, near) for _c, id_, near in SESSION_IDS))
        return dict(zip([case for case, _id, _near in SESSION_IDS], seen, strict=True))

    reference, engram = sessions.run(scenario)

    assert engram == reference
    expected: Any = ((CONVERSATION[2], CONVERSATION[:2], CONVERSATION[:1]), [])
    assert list(reference.values()) == [expected] * len(SESSION_IDS)


def test_ids_and_items_past_engrams_bounds_are_refused(sessions):
    """Listed differences (docs/client.md, "Conformance"): ``SQLiteSession`` takes any string
    as an id and an item of any size; Engram refuses an empty id before any request, and the
    batch write refuses an id over 200 characters and an item whose turn passes 100 KB (422),
    writing nothing."""
    big: Any = {"role": "user", "content": "x" * 120_000}

    async def reference_scenario(make):
        outcomes = []
        for session_id in ["", "é" * 201]:
            session = make(session_id)
            await session.add_items(CONVERSATION[:1])
            outcomes.append(await session.get_items())
        session = make("big")
        await session.add_items([big])
        outcomes.append(await session.get_items())
        return outcomes

    async def engram_scenario(make):
        outcomes = []
        for attempt in [
            lambda: make(""),
            lambda: make("é" * 201).add_items(CONVERSATION[:1]),
            lambda: make("big").add_items([big]),
        ]:
            try:
                pending = attempt()
                if asyncio.iscoroutine(pending):
                    await pending
            except InvalidRequestError as refused:
                outcomes.append((refused.status, refused.code))
        return outcomes, await make("big").get_items()

    assert asyncio.run(reference_scenario(sessions.reference)) == [
        CONVERSATION[:1],
        CONVERSATION[:1],
        [big],
    ]
    assert asyncio.run(engram_scenario(sessions.engram)) == (
        [(None, "invalid_session_id"), (422, "invalid_session_id"), (422, "content_too_large")],
        [],
    )


# --------------------------------------------------------------------------------- Runner

RUNNER_METHODS = ["run", "run_sync", "run_streamed"]


async def run_agent(method: str, agent: Agent[Any], message: Any, **options: Any) -> Any:
    """The agent run by one of the Runner's three entry points; ``run_sync`` in a worker
    thread (it runs its own event loop there, as upstream's ``run_agent_async`` has it)."""
    if method == "run":
        return await Runner.run(
            agent, message, run_config=options.pop("run_config", CONFIG), **options
        )
    if method == "run_sync":
        return await asyncio.to_thread(
            Runner.run_sync, agent, message, run_config=options.pop("run_config", CONFIG), **options
        )
    streamed = Runner.run_streamed(
        agent, message, run_config=options.pop("run_config", CONFIG), **options
    )
    async for _event in streamed.stream_events():
        pass
    return streamed


def scripted(*replies: str) -> ScriptedModel:
    return ScriptedModel(
        [[assistant_message(reply, item_id=f"msg_{n}")] for n, reply in enumerate(replies)]
    )


@pytest.mark.parametrize("method", RUNNER_METHODS)
def test_each_run_sees_the_history_of_its_own_session(sessions, method):
    """Modelled on ``test_session_memory_basic_functionality_parametrized`` and
    ``test_session_memory_different_sessions_parametrized``: two sessions, each run's model
    input is its session's history plus the new message."""

    async def scenario(make):
        model = scripted("San Francisco", "I like dogs", "California")
        agent = Agent(name="test", model=model)
        cats, dogs = make("session_1"), make("session_2")
        answers = [
            (
                await run_agent(
                    method, agent, "What city is the Golden Gate Bridge in?", session=cats
                )
            ).final_output,
            (await run_agent(method, agent, "I like dogs", session=dogs)).final_output,
            (await run_agent(method, agent, "What state is it in?", session=cats)).final_output,
        ]
        return (
            answers,
            [call.input for call in model.calls],
            await cats.get_items(),
            await dogs.get_items(),
        )

    reference, engram = sessions.run(scenario)

    assert engram == reference
    answers, inputs, cats, dogs = reference
    assert answers == ["San Francisco", "I like dogs", "California"]
    assert [len(each) for each in inputs] == [1, 1, 3]
    assert (len(cats), len(dogs)) == (4, 2)


@pytest.mark.parametrize("method", RUNNER_METHODS)
def test_run_config_session_limit_trims_the_history_sent(sessions, method):
    """Modelled on ``test_session_limit_parameter``, ``test_session_limit_zero`` and
    ``test_runner_with_session_settings_override``: the session's own default limit, then
    ``RunConfig(session_settings=…)`` overriding it."""

    async def scenario(make):
        model = scripted("Reply 1", "Reply 2", "Reply 3", "Reply 4", "Reply 5")
        agent = Agent(name="test", model=model)
        session = make("limited", session_settings=SessionSettings(limit=100))
        for n in (1, 2, 3):
            await run_agent(method, agent, f"Message {n}", session=session)
        for n, limit in [(4, 2), (5, 0)]:
            limited = RunConfig(
                tracing_disabled=True, session_settings=SessionSettings(limit=limit)
            )
            await run_agent(method, agent, f"Message {n}", session=session, run_config=limited)
        return [call.input for call in model.calls], len(await session.get_items())

    reference, engram = sessions.run(scenario)

    assert engram == reference
    inputs, stored = reference
    assert [len(each) for each in inputs] == [1, 3, 5, 3, 1]
    assert inputs[3][0]["content"] == "Message 3"
    assert stored == 10


def test_list_input_is_appended_and_the_input_callback_shapes_it(sessions):
    """Modelled on ``test_session_memory_appends_list_input_by_default`` and
    ``test_session_callback_prepared_input``."""
    history: list[Any] = [
        {"role": "user", "content": "Hello there."},
        {"role": "assistant", "content": "Hi, I'm here to assist you."},
    ]
    new_input: list[Any] = [{"role": "user", "content": "What is your name?"}]

    def users_only(saved: list[Any], incoming: list[Any]) -> list[Any]:
        return [item for item in saved if item.get("role") == "user"] + incoming

    async def scenario(make):
        model = scripted("I'm a test model", "Still a test model")
        agent = Agent(name="test", model=model)
        session = make("callback")
        await session.add_items(history)
        await run_agent("run", agent, new_input, session=session)
        filtered = RunConfig(tracing_disabled=True, session_input_callback=users_only)
        await run_agent("run", agent, new_input, session=session, run_config=filtered)
        return [call.input for call in model.calls], await session.get_items()

    reference, engram = sessions.run(scenario)

    assert engram == reference
    inputs, _items = reference
    assert inputs[0] == history + new_input
    assert inputs[1] == [history[0], new_input[0], new_input[0]]
