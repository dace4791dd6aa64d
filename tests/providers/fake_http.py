"""A real HTTP server on 127.0.0.1 for tests of code that calls remote providers.

Mocks stop at the network edge (DESIGN §8): the SDKs under test build real requests and parse
real responses. pytest-socket allows 127.0.0.1, so this works with the network blocked.

    server.respond("POST", "/v1/embeddings", FakeResponse(status=500))
    ... call the code under test with base_url=server.url("/v1") ...
    assert server.requests[0].body["model"] == "text-embedding-3-small"

Responses for a route are served in order and the last one repeats, so "fail twice, then
succeed" is ``respond(method, path, fail, fail, ok)``; calling ``respond`` again for the same
route replaces its script. Unscripted routes answer 404.

Other test packages: ``from tests.providers.fake_http import FakeHttpServer`` (or the
``fake_http`` fixture from this module) plus the payload helpers at the bottom.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import pytest
from typing_extensions import override


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    raw_body: bytes
    body: Any  # parsed JSON, or None when the body is empty or not JSON


@dataclass(frozen=True)
class FakeResponse:
    status: int = 200
    json_body: Any = None
    raw_body: bytes | None = None  # sent as-is instead of json_body (e.g. malformed JSON)
    headers: dict[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0


class FakeHttpServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: dict[tuple[str, str], list[FakeResponse]] = {}
        self._requests: list[RecordedRequest] = []
        self._stopped = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # Don't wait for a handler that is deliberately sleeping (timeout tests) on shutdown.
        self._server.block_on_close = False
        # A short poll interval keeps shutdown (every test's teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str = "") -> str:
        return f"{self.base_url}{path}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == path]

    def respond(self, method: str, path: str, *responses: FakeResponse) -> None:
        if not responses:
            raise ValueError("respond() needs at least one FakeResponse")
        with self._lock:
            self._routes[(method.upper(), path)] = list(responses)

    def respond_json(self, method: str, path: str, json_body: Any, *, status: int = 200) -> None:
        self.respond(method, path, FakeResponse(status=status, json_body=json_body))

    def start(self) -> FakeHttpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeHttpServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _record_and_pick(self, request: RecordedRequest) -> FakeResponse:
        with self._lock:
            self._requests.append(request)
            script = self._routes.get((request.method, request.path))
            if not script:
                return FakeResponse(
                    status=404,
                    json_body={"error": {"message": f"no fake route {request.path}"}},
                )
            return script.pop(0) if len(script) > 1 else script[0]


def _handler_for(server: FakeHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = RecordedRequest(
                method=self.command,
                path=self.path.split("?", 1)[0],
                headers={name.lower(): value for name, value in self.headers.items()},
                raw_body=raw,
                body=body,
            )
            response = server._record_and_pick(request)
            if response.delay_seconds:
                time.sleep(response.delay_seconds)
            payload = (
                response.raw_body
                if response.raw_body is not None
                else json.dumps(response.json_body).encode("utf-8")
            )
            try:
                self.send_response(response.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up first (a timeout test); nothing left to answer.
                pass

        do_GET = _handle
        do_POST = _handle
        do_PUT = _handle
        do_PATCH = _handle
        do_DELETE = _handle

        @override
        def log_message(self, format: str, *args: Any) -> None:
            # Keep test output clean; the recorded requests are the log.
            return

    return Handler


@pytest.fixture
def fake_http() -> Iterator[FakeHttpServer]:
    with FakeHttpServer() as server:
        yield server


# Payloads in the shapes the SDKs parse.


def openai_embeddings_payload(vectors: Sequence[Sequence[float]], *, model: str = "m") -> Any:
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": list(vector)}
            for index, vector in enumerate(vectors)
        ],
        "model": model,
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def openai_chat_payload(content: str | None, *, model: str = "m") -> Any:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def anthropic_message_payload(*blocks: dict[str, Any], model: str = "m") -> Any:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(blocks),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def error_payload(message: str = "boom") -> Any:
    return {"error": {"message": message, "type": "server_error"}}
