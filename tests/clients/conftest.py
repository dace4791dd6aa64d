"""The Python client against a live Engram test server (real HTTP, real Postgres)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from engram_client import Engram
from engram_client.langgraph import EngramStore

from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create
from tests.clients.proxy import MisbehavingProxy


class Recorder:
    """httpx event hooks that note every response the client received (status, headers)."""

    def __init__(self) -> None:
        self.responses: list[httpx.Response] = []

    def __call__(self, response: httpx.Response) -> None:
        self.responses.append(response)

    @property
    def statuses(self) -> list[int]:
        return [response.status_code for response in self.responses]


@pytest.fixture
def issue_key(db) -> Callable[..., str]:
    def _issue(tenant: Tenant | None, agent_id: str = "agent-a", role: str = ApiKeyRole.AGENT):
        return api_key_create(tenant=tenant, role=role, agent_id=agent_id).raw_key

    return _issue


@pytest.fixture
def make_engram(live_server, issue_key) -> Iterator[Callable[..., Engram]]:
    clients: list[Engram] = []
    http_clients: list[httpx.Client] = []

    def _make(
        tenant: Tenant | None = None,
        *,
        agent_id: str = "agent-a",
        key: str | None = None,
        base_url: str | None = None,
        recorder: Recorder | None = None,
        **options,
    ) -> Engram:
        raw_key = key if key is not None else issue_key(tenant, agent_id)
        http_client = None
        if recorder is not None:
            http_client = httpx.Client(event_hooks={"response": [recorder]}, timeout=30)
            http_clients.append(http_client)
        engram = Engram(base_url or live_server.url, raw_key, http_client=http_client, **options)
        clients.append(engram)
        return engram

    yield _make
    for engram in clients:
        engram.close()
    for http_client in http_clients:
        http_client.close()


@pytest.fixture
def engram(make_engram, tenant):
    return make_engram(tenant)


@pytest.fixture
def proxy(live_server) -> Iterator[MisbehavingProxy]:
    running = MisbehavingProxy(upstream=live_server.url)
    yield running
    running.close()


@pytest.fixture
def agent_key(issue_key, tenant):
    return issue_key(tenant, "langgraph-agent")


@pytest.fixture
def make_store(live_server, agent_key):
    """EngramStore instances on the live server as one agent, closed after the test."""
    stores: list[EngramStore] = []

    def _make(**options) -> EngramStore:
        store = EngramStore(live_server.url, agent_key, **options)
        stores.append(store)
        return store

    yield _make
    for store in stores:
        store.close()
