"""`engram-mcp` as a harness runs it: a real subprocess over stdio, and over streamable HTTP."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create
from tests.mcp.helpers import text_of

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

ENGRAM_MCP = str(Path(sys.executable).with_name("engram-mcp"))
REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_SECONDS = 20.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _key(tenant, agent_id: str) -> str:
    return api_key_create(tenant=tenant, role=ApiKeyRole.AGENT, agent_id=agent_id).raw_key


async def _session(server: Any, calls: list[tuple[str, dict]]) -> tuple[int, list[CallToolResult]]:
    async with Client(server) as client:
        listed = await client.list_tools()
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return len(listed.tools), results


# ----------------------------------------------------------------------------- stdio


def _stdio(live_server, raw_key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=ENGRAM_MCP,
        args=["--transport", "stdio"],
        env={"ENGRAM_API_URL": live_server.url, "ENGRAM_API_KEY": raw_key},
        cwd=REPO_ROOT,
    )


def test_the_stdio_server_round_trips_every_kind_of_call(live_server, tenant):
    server = _stdio(live_server, _key(tenant, "agent-a"))

    count, (remembered, refused, missing) = anyio.run(
        _session,
        server,
        [
            ("memory_remember", {"text": "Staging resets nightly"}),
            ("memory_list", {"subject_id": "agent-b"}),
            ("memory_forget", {"memory_id": "6f1f1c39-8a43-4a57-9f3f-2f6a4b2f7c11"}),
        ],
    )
    memory_embed_pending(memory_ids=list(Memory.objects.values_list("pk", flat=True)))
    _, (recalled,) = anyio.run(
        _session, server, [("memory_recall", {"query": "when does staging reset?"})]
    )

    assert count == 12
    assert remembered.is_error is False
    assert remembered.structured_content["data"]["subject_id"] == "agent-a"
    assert refused.is_error is True
    assert text_of(refused).startswith(
        "invalid_arguments: subject_id: Extra inputs are not permitted"
    )
    assert (missing.is_error, text_of(missing)[:11]) == (True, "not_found: ")
    assert [hit["memory"]["text"] for hit in recalled.structured_content["data"]] == [
        "Staging resets nightly"
    ]


def test_engram_mcp_without_a_key_refuses_to_start():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_API_")}

    finished = subprocess.run(  # noqa: S603 - a fixed argv: the installed console script
        [ENGRAM_MCP],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )

    assert finished.returncode == 2
    assert finished.stderr.decode() == "engram-mcp: ENGRAM_API_KEY is not set\n"


# ----------------------------------------------------------------------------- streamable HTTP


@pytest.fixture
def http_server(live_server) -> Iterator[str]:
    """``engram-mcp --transport http`` with no key of its own: callers bring theirs."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_API_")}
    env["ENGRAM_API_URL"] = live_server.url
    process = subprocess.Popen(  # noqa: S603 - a fixed argv: the installed console script
        [ENGRAM_MCP, "--transport", "http", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    _, stderr = process.communicate(timeout=5)
                    pytest.fail(f"engram-mcp did not start: {stderr.decode()}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def _over_http(url: str, raw_key: str | None, calls: list[tuple[str, dict]]):
    async def run() -> tuple[int, list[CallToolResult]]:
        headers = {"Authorization": f"Bearer {raw_key}"} if raw_key else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            return await _session(streamable_http_client(url, http_client=http), calls)

    return anyio.run(run)


def test_over_http_each_caller_keeps_the_scope_of_its_own_key(http_server, tenant):
    agent_key, peer_key = _key(tenant, "agent-a"), _key(tenant, "agent-b")

    count, (remembered,) = _over_http(
        http_server, agent_key, [("memory_remember", {"text": "agent-a's note"})]
    )
    _, (peer_list,) = _over_http(http_server, peer_key, [("memory_list", {})])
    _, (agent_list,) = _over_http(http_server, agent_key, [("memory_list", {})])
    _, (anonymous,) = _over_http(http_server, None, [("memory_list", {})])

    assert count == 12
    assert remembered.structured_content["data"]["subject_id"] == "agent-a"
    assert peer_list.structured_content["data"] == []
    assert [m["text"] for m in agent_list.structured_content["data"]] == ["agent-a's note"]
    assert (anonymous.is_error, text_of(anonymous)[:19]) == (True, "not_authenticated: ")
    assert list(Memory.objects.values_list("subject_id", flat=True)) == ["agent-a"]
