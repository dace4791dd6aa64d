"""The anonymous-MCP case: callers without a usable key against ``engram-mcp --transport http``.

The MCP server is started with one agent's key as its own ``ENGRAM_API_KEY``, the worst case:
before it required a bearer key per request, anyone reaching the port acted as that key. The
probe then speaks the protocol by hand, so it sees each answer's HTTP status: a session opened
with no ``Authorization`` header, with ``Basic`` (the server's own key as the password), with an
empty ``Bearer`` and with the bare key; a call without a key inside a session another agent
opened; and that other agent's own ``memory_list``. Pass: every keyless request is refused with
401, and the other agent reads nothing of another subject.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from apps.core.local_stack import stop_process_group
from lab.faults.stack import ROOT, free_port, wait_for_port

#: The protocol spoken here: a session opened by ``initialize``, then calls within it.
PROTOCOL_VERSION = "2025-06-18"
ACCEPT = {"Accept": "application/json, text/event-stream"}
STARTUP_TIMEOUT_S = 30.0


@contextmanager
def engram_mcp_http(*, api_url: str, own_key: str, log: Path) -> Iterator[str]:
    """``engram-mcp --transport http`` on a free port with ``own_key`` as its ENGRAM_API_KEY;
    yields its MCP endpoint's URL."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("ENGRAM_")}
    env |= {"ENGRAM_API_URL": api_url, "ENGRAM_API_KEY": own_key}
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603 - fixed argv built here
            [sys.executable, "-m", "apps.mcp.server", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        if not wait_for_port(port, STARTUP_TIMEOUT_S):
            raise RuntimeError(f"engram-mcp did not start (see {log})")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process_group(process, signal.SIGTERM)


def _message(method: str, params: dict[str, Any], request_id: int | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return message


INITIALIZE = _message(
    "initialize",
    {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "fault-suite", "version": "1"},
    },
    1,
)
LIST_MEMORIES = _message("tools/call", {"name": "memory_list", "arguments": {}}, 2)


def _authorization(value: str | None) -> dict[str, str]:
    return {} if value is None else {"Authorization": value}


def _open_session(http: httpx.Client, url: str, key: str) -> dict[str, str]:
    """A session opened with ``key``: the headers that continue it, the key left out."""
    opened = http.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {key}"})
    opened.raise_for_status()
    session = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "Mcp-Protocol-Version": PROTOCOL_VERSION,
    }
    http.post(
        url,
        json=_message("notifications/initialized", {}, None),
        headers={**session, "Authorization": f"Bearer {key}"},
    ).raise_for_status()
    return session


def _result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a call answered as server-sent events."""
    response.raise_for_status()
    data = [line for line in response.text.splitlines() if line.startswith("data: ")]
    message: dict[str, Any] = json.loads(data[-1][len("data: ") :])
    return dict(message["result"])


def probe_anonymous_mcp(
    url: str, *, own_key: str, other_key: str, other_subject: str
) -> dict[str, Any]:
    """What the MCP server at ``url`` (started with ``own_key``) answers keyless callers, and
    what the agent ``other_subject`` (``other_key``) reads through it."""
    basic = base64.b64encode(f"agent:{own_key}".encode()).decode()
    keyless = {
        "initialize, no Authorization header": None,
        "initialize, Basic with the server's own key": f"Basic {basic}",
        "initialize, empty Bearer": "Bearer",
        "initialize, the server's own key with no scheme": own_key,
    }
    refused: dict[str, int] = {}
    with httpx.Client(timeout=30) as http:
        for case, authorization in keyless.items():
            answer = http.post(
                url, json=INITIALIZE, headers={**ACCEPT, **_authorization(authorization)}
            )
            refused[case] = answer.status_code
        session = _open_session(http, url, other_key)
        keyless_call = http.post(url, json=LIST_MEMORIES, headers=session)
        refused["memory_list, no key, in another agent's session"] = keyless_call.status_code
        # Anything a keyless call gets back belongs to someone else.
        read_without_key = (
            _result(keyless_call).get("structuredContent", {}).get("data", [])
            if keyless_call.status_code == 200
            else []
        )
        listed = _result(
            http.post(
                url, json=LIST_MEMORIES, headers={**session, "Authorization": f"Bearer {other_key}"}
            )
        )
    failed = bool(listed.get("isError"))
    memories = [] if failed else listed["structuredContent"]["data"]
    foreign = sum(1 for memory in memories if memory["subject_id"] != other_subject)
    return {
        "keyless_requests": refused,
        "other_agent_call": "tool error" if failed else "listed its own memories",
        "other_agent_listed": len(memories),
        "foreign_memories_read": foreign,
        "memories_read_without_a_key": len(read_without_key),
        "passed": set(refused.values()) == {401}
        and not failed
        and foreign == 0
        and not read_without_key,
    }
