"""Each conformance case runs the same calls against the framework's reference implementation
and against the Engram adapter over a live Engram, then compares what the two returned.

The reference store (LangGraph's ``InMemoryStore``) embeds with the test suite's deterministic
embedder, the one the live server uses, so both sides rank by the same vectors' kind of
similarity. What the comparisons normalise, and every behaviour the two are allowed to differ
in, is listed in docs/client.md ("Conformance").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from agents import SQLiteSession
from django.conf import settings
from engram_client import AsyncEngram, Engram
from engram_client.langgraph import EngramStore
from engram_client.openai_agents import EngramSession
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from apps.providers.embedders.fake import FakeEmbedder

T = TypeVar("T")

MakeSession = Callable[..., Any]


@dataclass
class Pair:
    """The reference implementation and the Engram adapter, built the same way."""

    reference: Any
    engram: Any

    def run(self, scenario: Callable[[Any], Awaitable[T]]) -> tuple[T, T]:
        """``scenario`` on each side, each in an event loop of its own."""
        return asyncio.run(scenario(self.reference)), asyncio.run(scenario(self.engram))

    def call(self, scenario: Callable[[Any], T]) -> tuple[T, T]:
        """A synchronous ``scenario`` on each side."""
        return scenario(self.reference), scenario(self.engram)


@pytest.fixture
def conformance_key(issue_key, tenant):
    return issue_key(tenant, "conformance")


@pytest.fixture
def engram_client(live_server, conformance_key) -> Iterator[Engram]:
    """A synchronous client of the same subject, for writing memories the adapter did not."""
    with Engram(live_server.url, conformance_key) as client:
        yield client


@pytest.fixture
def sessions(live_server, conformance_key, tmp_path: Path) -> Iterator[Pair]:
    """Two session factories, ``make(session_id, **options)``: the SDK's ``SQLiteSession`` (one
    database file, so sessions sit side by side as Engram's do) and ``EngramSession`` (one
    ``AsyncEngram``, used from whichever event loop the case runs in)."""
    made: list[SQLiteSession] = []
    client = AsyncEngram(live_server.url, conformance_key)

    def reference(session_id: str, **options: Any) -> SQLiteSession:
        session = SQLiteSession(session_id, tmp_path / "sessions.db", **options)
        made.append(session)
        return session

    def engram(session_id: str, **options: Any) -> EngramSession:
        return EngramSession(session_id, client, **options)

    yield Pair(reference, engram)
    for session in made:
        session.close()
    asyncio.run(client.aclose())


def embed(texts: list[str]) -> list[list[float]]:
    return FakeEmbedder(dimensions=settings.EMBEDDING_DIMENSIONS).embed(texts)


@pytest.fixture
def stores(live_server, conformance_key) -> Iterator[Pair]:
    """``InMemoryStore`` indexing the ``text`` field with the live server's embedder, and an
    ``EngramStore`` over the live server."""
    reference: BaseStore = InMemoryStore(
        index={"dims": settings.EMBEDDING_DIMENSIONS, "embed": embed, "fields": ["text"]}
    )
    engram = EngramStore(live_server.url, conformance_key)
    yield Pair(reference, engram)
    asyncio.run(engram.aclose())
