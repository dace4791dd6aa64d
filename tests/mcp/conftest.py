"""Drive the MCP server with the SDK's own client, against a live Engram test server.

``connect(tenant, agent_id)`` issues an API key and returns an :class:`McpAgent`: the MCP
server built for that key (exactly what ``engram-mcp`` builds from its environment), reached
in-process by ``mcp.Client``. Every tool call then crosses real HTTP into ``live_server``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engram_client import Engram

from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.services import api_key_create
from tests.mcp.helpers import McpAgent


@pytest.fixture
def connect(live_server) -> Callable[..., McpAgent]:
    def _connect(
        tenant: Tenant, agent_id: str = "agent-a", role: str = ApiKeyRole.AGENT
    ) -> McpAgent:
        issued = api_key_create(tenant=tenant, role=role, agent_id=agent_id)
        engram = Engram(live_server.url, issued.raw_key)
        return McpAgent(engram, subject_id=agent_id or str(issued.api_key.pk))

    return _connect


@pytest.fixture
def mcp_agent(connect: Callable[..., McpAgent], tenant) -> McpAgent:
    return connect(tenant, "agent-a")


@pytest.fixture
def mcp_peer(connect: Callable[..., McpAgent], tenant) -> McpAgent:
    """Another agent of the same tenant."""
    return connect(tenant, "agent-b")


@pytest.fixture
def mcp_foreigner(connect: Callable[..., McpAgent], other_tenant) -> McpAgent:
    """An agent of another tenant that happens to use the same agent_id."""
    return connect(other_tenant, "agent-a")
