"""`engram-mcp` as a harness runs it: a real subprocess over stdio, and over streamable HTTP."""

import base64
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from engram_client import Engram
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from apps.mcp.server import build_server
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
        env={
            "ENGRAM_API_URL": live_server.url,
            "ENGRAM_API_KEY": raw_key,
            "PYTHONPATH": str(REPO_ROOT),
        },
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


@dataclass(frozen=True)
class HttpServer:
    url: str
    #: The key in the server's own environment (agent-a's): no HTTP caller may act as it.
    own_key: str
    log: Path


@pytest.fixture
def http_server(live_server, tenant, tmp_path) -> Iterator[HttpServer]:
    """``engram-mcp --transport http`` started with agent-a's key as its ENGRAM_API_KEY."""
    port = _free_port()
    own_key = _key(tenant, "agent-a")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(
        {"ENGRAM_API_URL": live_server.url, "ENGRAM_API_KEY": own_key, "PYTHONPATH": str(REPO_ROOT)}
    )
    log = tmp_path / "engram-mcp.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(  # noqa: S603 - a fixed argv: the installed console script
            [ENGRAM_MCP, "--transport", "http", "--port", str(port)],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"engram-mcp did not start: {log.read_text()}")
                time.sleep(0.1)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", own_key, log)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _over_http(url: str, authorization: str | None, calls: list[tuple[str, dict]]):
    async def run() -> tuple[int, list[CallToolResult]]:
        headers = {"Authorization": authorization} if authorization is not None else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            return await _session(streamable_http_client(url, http_client=http), calls)

    return anyio.run(run)


# The protocol spoken by hand below: a session opened by `initialize`, then calls within it.
SESSION_PROTOCOL_VERSION = "2025-06-18"
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _rpc(method: str, params: dict, request_id: int | None = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return message


def _initialize() -> dict:
    return _rpc(
        "initialize",
        {
            "protocolVersion": SESSION_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    )


def _open_session(http: httpx2.Client, url: str, authorization: str) -> dict[str, str]:
    """A session opened with ``authorization``: the headers that continue it, key excluded."""
    opened = http.post(url, json=_initialize(), headers={**ACCEPT, "Authorization": authorization})
    assert opened.status_code == 200, opened.text
    session = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "Mcp-Protocol-Version": SESSION_PROTOCOL_VERSION,
    }
    initialized = http.post(
        url,
        json=_rpc("notifications/initialized", {}, None),
        headers={**session, "Authorization": authorization},
    )
    assert initialized.status_code == 202, initialized.text
    return session


def _event_data(response: httpx2.Response) -> dict[str, Any]:
    """The one JSON-RPC message of a server-sent-events response."""
    lines = [line for line in response.text.splitlines() if line.startswith("data: ")]
    assert len(lines) == 1, response.text
    message: dict[str, Any] = json.loads(lines[0][len("data: ") :])
    return message


REFUSED_BODY = {
    "error": {
        "code": "authentication_required",
        "message": "This MCP server acts as the key each request carries: send Authorization: "
        "Bearer <your Engram API key>.",
        "details": {},
    }
}


def _refused(response: httpx2.Response) -> tuple[int, str | None, dict]:
    return response.status_code, response.headers.get("www-authenticate"), response.json()


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    ("_case", "authorization"),
    [
        ("no header", None),
        ("basic, the server's own key as password", "own-key-as-basic"),
        ("bearer with an empty key", "Bearer"),
        ("the server's own key with no scheme", "own-key-bare"),
    ],
)
def test_over_http_a_request_without_a_bearer_key_is_refused_with_401(
    http_server, tenant, _case, authorization
):
    peer_key = _key(tenant, "agent-b")
    authorization = {
        "own-key-as-basic": _basic("agent-a", http_server.own_key),
        "own-key-bare": http_server.own_key,
    }.get(authorization, authorization)
    headers = {"Authorization": authorization} if authorization is not None else {}
    list_call = _rpc("tools/call", {"name": "memory_list", "arguments": {}}, 2)

    with httpx2.Client(timeout=30) as http:
        initialize = http.post(http_server.url, json=_initialize(), headers={**ACCEPT, **headers})
        # A session a valid key opened does not carry that key over to the next request.
        session = _open_session(http, http_server.url, f"Bearer {peer_key}")
        call = http.post(http_server.url, json=list_call, headers={**session, **headers})

    refused = (401, 'Bearer realm="engram"', REFUSED_BODY)
    assert _refused(initialize) == refused
    assert _refused(call) == refused


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    return [
        leaf
        for error in group.exceptions
        for leaf in (_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    ]


def test_over_http_an_anonymous_client_cannot_read_the_servers_own_keys_memories(
    live_server, http_server
):
    Engram(live_server.url, http_server.own_key).remember("agent-a's private note")

    with pytest.raises(ExceptionGroup) as raised:
        _over_http(http_server.url, None, [("memory_list", {})])

    assert [repr(error) for error in _leaves(raised.value)] == [
        "MCPError(-32603, 'Server returned an error response', None)"
    ]
    assert http_server.log.read_text().splitlines()[0] == (
        "engram-mcp: ENGRAM_API_KEY is ignored over HTTP; every request acts as the key in its "
        "own Authorization: Bearer header"
    )


def test_over_http_an_unknown_key_gets_engrams_own_refusal(http_server):
    _, (listed,) = _over_http(
        http_server.url, "Bearer eng_000000000000_unknown", [("memory_list", {})]
    )

    assert listed.is_error is True
    assert text_of(listed) == "authentication_failed: Invalid or revoked API key."
    assert listed.structured_content == {
        "error": {
            "code": "authentication_failed",
            "message": "Invalid or revoked API key.",
            "details": {},
        },
        "status": 401,
    }


def test_over_http_each_caller_keeps_the_scope_of_its_own_key(http_server, tenant):
    agent_key, peer_key = http_server.own_key, _key(tenant, "agent-b")

    count, (remembered,) = _over_http(
        http_server.url, f"Bearer {agent_key}", [("memory_remember", {"text": "agent-a's note"})]
    )
    _, (peer_list,) = _over_http(http_server.url, f"Bearer {peer_key}", [("memory_list", {})])
    _, (agent_list,) = _over_http(http_server.url, f"Bearer {agent_key}", [("memory_list", {})])
    with httpx2.Client(timeout=30) as http:
        # One session, two keys: each call acts as the key it carries.
        session = _open_session(http, http_server.url, f"Bearer {agent_key}")
        peer_call = http.post(
            http_server.url,
            json=_rpc("tools/call", {"name": "memory_list", "arguments": {}}, 2),
            headers={**session, "Authorization": f"Bearer {peer_key}"},
        )

    assert count == 12
    assert remembered.structured_content["data"]["subject_id"] == "agent-a"
    assert peer_list.structured_content["data"] == []
    assert [m["text"] for m in agent_list.structured_content["data"]] == ["agent-a's note"]
    assert _event_data(peer_call)["result"]["structuredContent"]["data"] == []
    assert list(Memory.objects.values_list("subject_id", flat=True)) == ["agent-a"]


def test_a_server_taking_caller_keys_refuses_a_call_that_carries_none(live_server, tenant):
    """Behind the 401, the tools themselves never fall back to the client's own key."""
    engram = Engram(live_server.url, _key(tenant, "agent-a"))
    engram.remember("agent-a's private note")

    _, (listed,) = anyio.run(
        _session, build_server(engram, caller_keys=True), [("memory_list", {})]
    )

    assert listed.is_error is True
    assert text_of(listed) == (
        "authentication_required: This MCP server acts as the key each request carries: send "
        "Authorization: Bearer <your Engram API key>."
    )
