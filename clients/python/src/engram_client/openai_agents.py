"""``EngramSession``: an OpenAI Agents SDK ``Session`` kept in Engram's session tier.

Requires the ``openai-agents`` extra: ``pip install 'engram-client[openai-agents]'``.

``Runner.run(agent, input, session=EngramSession("chat-42"))`` reads the conversation from
Engram before the run and appends the run's new items after it; ``await session.promote()``
then compiles the conversation into long-term memories. The mapping (docs/client.md):

* One SDK item is one session turn, in the order added (read back by ``seq``).
* ``role``: a message's role (``developer`` → ``system``); every other item (tool calls, tool
  output, reasoning) → ``system``, which promotion does not compile from.
* ``content``: what promotion reads: a message's text (its text parts joined), other items as
  compact JSON.
* ``metadata["openai_agents"]["item"]``: the item itself, returned as is by ``get_items``. An
  item too large for Engram's metadata cap (16 KiB serialized) is kept as JSON in ``content``
  instead (``metadata["openai_agents"]["in_content"]``); the turn cap is 100 KB.
* Turns appended some other way (MCP, the HTTP API) read back as ``{"role", "content"}``
  messages, ``fact`` turns as ``system``.

Turns expire like every session turn (``ttl_seconds``, 24 h by default; at most Engram's
``ENGRAM_SESSION_MAX_TTL_SECONDS``), so a conversation that outlives it loses its oldest items.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, cast

from engram_client._core import BATCH_MAX_ITEMS, NewTurn, check_session_id, rate_limit_per_window
from engram_client.async_client import AsyncEngram
from engram_client.errors import RateLimitedError
from engram_client.models import PromotionResult, SessionCleared, SessionTurn

try:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import (
        SessionSettings,
        coerce_session_settings,
        resolve_session_limit,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "engram_client.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'engram-client[openai-agents]'"
    ) from exc

__all__ = ["EngramSession"]

METADATA_KEY = "openai_agents"
#: Room left under Engram's 16 KiB metadata cap for the wrapper around the item.
ITEM_METADATA_MAX_BYTES = 16 * 1024 - 256
SESSION_PAGE_MAX = 1000
MESSAGE_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _message_text(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping):
            text = part.get("text") or part.get("refusal")
            if isinstance(text, str) and text:
                parts.append(text)
    return "\n".join(parts)


def item_turn(session_id: str, item: Mapping[str, Any], *, ttl_seconds: int | None) -> NewTurn:
    """The session turn one SDK item is written as."""
    role = item.get("role")
    is_message = isinstance(role, str) and item.get("type", "message") == "message"
    encoded = _compact(dict(item))
    content = _message_text(item) if is_message else ""
    if not content.strip():
        content = encoded
    if len(encoded.encode("utf-8")) <= ITEM_METADATA_MAX_BYTES:
        metadata: dict[str, Any] = {METADATA_KEY: {"item": dict(item)}}
    else:
        content, metadata = encoded, {METADATA_KEY: {"in_content": True}}
    return NewTurn(
        session_id=session_id,
        content=content,
        role=MESSAGE_ROLES.get(str(role), "system") if is_message else "system",
        metadata=metadata,
        ttl_seconds=ttl_seconds,
    )


def turn_item(turn: SessionTurn) -> TResponseInputItem:
    """The SDK item a session turn holds (a plain message for turns written elsewhere)."""
    record = turn.metadata.get(METADATA_KEY)
    if isinstance(record, dict):
        if isinstance(record.get("item"), dict):
            return cast("TResponseInputItem", record["item"])
        if record.get("in_content"):
            return cast("TResponseInputItem", json.loads(turn.content))
    role = turn.role if turn.role in MESSAGE_ROLES else "system"
    return cast("TResponseInputItem", {"role": role, "content": turn.content})


class EngramSession:
    """The Agents SDK ``Session`` protocol over one Engram session of the API key's subject.

    ``session_id`` is any printable text of 1–200 characters, kept as given (``/``, ``.``,
    spaces, ``%`` and any script included); left out (None), it is a new ``agents-<uuid>``.
    An empty one is refused at once (``InvalidRequestError``, ``invalid_session_id``).
    ``client`` is an ``AsyncEngram`` (one is made from ``ENGRAM_API_URL`` / ``ENGRAM_API_KEY``,
    or ``base_url`` / ``api_key``, when left out). ``session_settings.limit`` caps what
    ``get_items()`` returns when it is called without a limit, as in the SDK's own sessions.
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str | None = None,
        client: AsyncEngram | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        ttl_seconds: int | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        if session_id is None:
            session_id = f"agents-{uuid.uuid4()}"
        check_session_id(session_id)
        self.session_id = session_id
        self._owns_client = client is None
        self.client = client or AsyncEngram(base_url, api_key)
        self.ttl_seconds = ttl_seconds
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )

    async def aclose(self) -> None:
        """Close the client this session made (not one passed in)."""
        if self._owns_client:
            await self.client.aclose()

    # ------------------------------------------------------------------------- Session

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation oldest first; with a limit, its latest ``limit`` items."""
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit <= 0:
            return []
        first = await self.client.session_history(
            self.session_id, limit=min(limit or SESSION_PAGE_MAX, SESSION_PAGE_MAX)
        )
        turns: list[SessionTurn] = list(first.data)
        total = first.meta.total_count
        if total > len(turns):
            # With a limit only the newest `limit` turns are wanted: start there.
            start = 0 if limit is None else max(0, total - limit)
            if start > 0:
                turns = []
            offset = start or len(turns)
            while limit is None or len(turns) < limit:
                page = await self.client.session_history(
                    self.session_id, limit=SESSION_PAGE_MAX, offset=offset
                )
                turns.extend(page.data)
                offset += len(page.data)
                if not page.data or offset >= page.meta.total_count:
                    break
        if limit is not None:
            turns = turns[-limit:]
        return [turn_item(turn) for turn in turns]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append the items as turns, in order, through Engram's batch write.

        Batches hold up to 500 items (Engram's largest), each all or nothing. A batch refused
        by the write rate (429) is sent again after ``Retry-After``, up to the client's
        ``max_retries`` times; when the rate admits fewer items per window than a batch holds,
        the batches shrink to what one window admits. If a batch still fails, the batches
        before it stay written and the error is raised.
        """
        turns = [
            item_turn(
                self.session_id, cast("Mapping[str, Any]", item), ttl_seconds=self.ttl_seconds
            )
            for item in items
        ]
        size = BATCH_MAX_ITEMS
        start = 0
        while start < len(turns):
            batch = turns[start : start + size]
            try:
                await self.client.remember_many(batch)
            except RateLimitedError as error:
                admitted = rate_limit_per_window(error.details)
                if admitted is None or not 0 < admitted < len(batch):
                    raise
                size = admitted  # no wait lets this batch through: send what a window admits
                continue
            start += len(batch)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item; None when the session is empty."""
        turn = await self.client.session_pop(self.session_id)
        return None if turn is None else turn_item(turn)

    async def clear_session(self) -> None:
        """Delete every turn of the session."""
        await self.clear()

    # ------------------------------------------------------------------------- Engram

    async def clear(self) -> SessionCleared:
        """``clear_session`` that says how many turns it deleted."""
        return await self.client.session_clear(self.session_id)

    async def promote(self) -> PromotionResult:
        """Compile the conversation into long-term memories (in the background)."""
        return await self.client.promote(self.session_id)
