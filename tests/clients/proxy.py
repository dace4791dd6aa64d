"""A real TCP proxy in front of the live test server that can misbehave on purpose.

Each request is read in full and, by the next entry of ``plan``, either forwarded and its
response relayed (``"pass"``), forwarded but the connection closed before any byte of the
response goes back (``"drop"``: the write happened, the client never hears of it), or
answered with a canned 503 and ``Retry-After`` without reaching the server (``"busy"``).
Once the plan runs out every request passes.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from typing_extensions import override

BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 89\r\n\r\n"
    b'{"error": {"code": "service_unavailable", "message": "Try again shortly.", "details": {}}}'
)


@dataclass
class SeenRequest:
    request_line: str
    headers: dict[str, str]
    action: str
    body: bytes = b""
    #: The status the server answered (None when the request never reached it).
    status: int | None = None


@dataclass
class MisbehavingProxy:
    upstream: str
    plan: list[str] = field(default_factory=list)
    seen: list[SeenRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        self._upstream_address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            @override
            def handle(self) -> None:
                proxy._handle(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_action(self) -> str:
        with self._lock:
            return self.plan.pop(0) if self.plan else "pass"

    def _handle(self, client: socket.socket) -> None:
        head, body = _read_request(client)
        if not head:
            return
        lines = head.decode("latin-1").split("\r\n")
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:] if line)
        }
        action = self._next_action()
        seen = SeenRequest(lines[0], headers, action, body)
        with self._lock:
            self.seen.append(seen)
        if action == "busy":
            client.sendall(BUSY_RESPONSE)
            return
        rewritten = [lines[0]] + [
            line for line in lines[1:] if line and not line.lower().startswith("connection:")
        ]
        upstream_request = ("\r\n".join([*rewritten, "Connection: close"]) + "\r\n\r\n").encode(
            "latin-1"
        ) + body
        with socket.create_connection(self._upstream_address, timeout=30) as upstream:
            upstream.sendall(upstream_request)
            response = _read_all(upstream)
        seen.status = int(response.split(b" ", 2)[1])
        if action == "pass":
            client.sendall(_closing(response))
        # "drop": the server answered, the client gets nothing; the handler closes the socket.


def _closing(response: bytes) -> bytes:
    """``response`` telling the client the connection closes after it: the proxy serves one
    request a connection, and a client that kept the connection for its next request would
    race the proxy's close and lose that request ("Server disconnected")."""
    head, _, body = response.partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + body


def _read_request(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b"", b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
