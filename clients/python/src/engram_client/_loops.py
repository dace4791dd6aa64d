"""One ``httpx.AsyncClient`` per event loop, for :class:`~engram_client.AsyncEngram`.

An ``httpx.AsyncClient`` keeps its connections open between requests, and each connection
belongs to the event loop that opened it. Used from a second loop (a second ``asyncio.run``,
the Agents SDK's ``Runner.run_sync``, a worker thread's loop) such a connection fails with
``RuntimeError: Event loop is closed`` or worse. So the client is made lazily, one per running
loop, and closed when that loop ends.

How it is closed at the loop's end: each loop's client comes with a small async generator,
started in that loop, whose ``finally`` closes the client. ``asyncio.run`` (and
``asyncio.Runner``, and ``Runner.run_sync`` after each run) call ``loop.shutdown_asyncgens()``
before letting the loop go, which runs that ``finally`` inside the loop, while the client can
still be closed cleanly. A loop closed without that step leaves its client to the garbage
collector; the client is dropped from the table as soon as its loop is seen closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

import httpx


@dataclass
class _LoopClient:
    client: httpx.AsyncClient
    #: Holds the generator alive until its loop shuts it down (the loop keeps a weak reference).
    closer: AsyncGenerator[None, None]


class LoopClients:
    """The ``httpx.AsyncClient`` of each running event loop, made by ``make`` on first use."""

    def __init__(self, make: Callable[[], httpx.AsyncClient]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._by_loop: dict[asyncio.AbstractEventLoop, _LoopClient] = {}

    async def current(self) -> httpx.AsyncClient:
        """The running loop's client, made (and its closer started) on the loop's first call."""
        loop = asyncio.get_running_loop()
        with self._lock:
            for gone in [other for other in self._by_loop if other.is_closed()]:
                del self._by_loop[gone]
            entry = self._by_loop.get(loop)
            if entry is not None:
                return entry.client
            client = self._make()
            entry = _LoopClient(client, self._close_at_shutdown(loop, client))
            self._by_loop[loop] = entry
        # The first step runs up to the `yield`: from then on the loop tracks the generator.
        await entry.closer.asend(None)
        return client

    async def _close_at_shutdown(
        self, loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                entry = self._by_loop.get(loop)
                if entry is not None and entry.client is client:
                    del self._by_loop[loop]
            await client.aclose()

    async def aclose(self) -> None:
        """Close every loop's client: this loop's now, a live other loop's on that loop."""
        running = asyncio.get_running_loop()
        with self._lock:
            entries, self._by_loop = self._by_loop, {}
        for loop, entry in entries.items():
            if loop is running:
                await entry.client.aclose()
            elif not loop.is_closed():
                # Its connections can only be closed on their own loop (in another thread, or
                # idle until it runs again); the closer, no longer referenced, is finalised
                # there too and finds the client already closed.
                asyncio.run_coroutine_threadsafe(entry.client.aclose(), loop)
