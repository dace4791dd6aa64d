"""An OpenAI Agents SDK conversation kept in Engram (``EngramSession``), then promoted.

pip install './clients/python[openai-agents]'
ENGRAM_API_URL=http://127.0.0.1:8000 ENGRAM_API_KEY=... python openai_agents_session.py

With OPENAI_API_KEY set the agent runs on ``gpt-4.1-mini`` (or ``$OPENAI_MODEL``); without
it, on a small offline model that repeats the user, so the example runs against Engram alone.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from agents.memory import Session
from engram_client.openai_agents import EngramSession
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from typing_extensions import override


class EchoModel(Model):
    """An offline stand-in for an LLM: answers with the last user message."""

    @override
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        said = input if isinstance(input, str) else str(input[-1].get("content", ""))
        text = ResponseOutputText(type="output_text", text=f"You said: {said}", annotations=[])
        message = ResponseOutputMessage(
            id="msg_echo", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    @override
    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("EchoModel does not stream")


async def main() -> None:
    model: str | Model = (
        os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
        if os.environ.get("OPENAI_API_KEY")
        else EchoModel()
    )
    agent = Agent(name="assistant", instructions="Reply in one sentence.", model=model)
    config = RunConfig(tracing_disabled=not os.environ.get("OPENAI_API_KEY"))
    session = EngramSession("example-chat")  # ENGRAM_API_URL, ENGRAM_API_KEY
    checked: Session = session  # the SDK's protocol, checked by mypy
    try:
        await checked.clear_session()
        for said in ["I'm Ada; our staging database runs PostgreSQL 18.", "What do we run?"]:
            result = await Runner.run(agent, said, session=session, run_config=config)
            print("agent:", result.final_output)
        print("history:", [item.get("role") for item in await session.get_items()])
        print("undo:", await session.pop_item())
        print("promotion:", (await session.promote()).reason)
    finally:
        await session.aclose()


if __name__ == "__main__":
    asyncio.run(main())
