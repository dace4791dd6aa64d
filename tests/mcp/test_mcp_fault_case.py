"""The fault suite's anonymous-MCP case, against a live Engram server."""

import pytest
from engram_client import Engram

from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create
from lab.faults.mcp import engram_mcp_http, probe_anonymous_mcp

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def test_the_anonymous_mcp_case_sees_every_keyless_request_refused(live_server, tenant, tmp_path):
    own_key, other_key = (
        api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id=agent_id).raw_key
        for agent_id in ("agent-a", "agent-b")
    )
    Engram(live_server.url, own_key).remember("agent-a's private note")
    Engram(live_server.url, other_key).remember("agent-b's own note")

    with engram_mcp_http(
        api_url=live_server.url, own_key=own_key, log=tmp_path / "engram-mcp.log"
    ) as url:
        report = probe_anonymous_mcp(
            url, own_key=own_key, other_key=other_key, other_subject="agent-b"
        )

    assert report == {
        "keyless_requests": {
            "initialize, no Authorization header": 401,
            "initialize, Basic with the server's own key": 401,
            "initialize, empty Bearer": 401,
            "initialize, the server's own key with no scheme": 401,
            "memory_list, no key, in another agent's session": 401,
        },
        "other_agent_call": "listed its own memories",
        "other_agent_listed": 1,
        "foreign_memories_read": 0,
        "memories_read_without_a_key": 0,
        "passed": True,
    }
