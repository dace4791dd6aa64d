"""`engram-mcp`: Engram's MCP server, over stdio (for a harness to spawn) or streamable HTTP.

Built on the official MCP Python SDK (``MCPServer``). The tools live in :mod:`apps.mcp.tools`
and reach Engram over its HTTP API only, through the Python client (``engram_client``),
configured by ``ENGRAM_API_URL`` and ``ENGRAM_API_KEY``. An operator's server runs with a
superadmin key and ``ENGRAM_IMPERSONATE_TENANT`` naming the tenant it oversees.

Scope-blindness has two layers. No tool declares a tenant or subject parameter, and every
tool's input schema says ``additionalProperties: false``, which the server enforces: a call
carrying ``tenant_id``, ``subject_id`` or any other undeclared argument is refused as a tool
error before anything is sent. Even past that, the tools build each request body from their
declared parameters alone, and the API derives scope from the key.

Over streamable HTTP every request must carry ``Authorization: Bearer <key>``, and its tool
calls act as that key, so every agent connecting to one shared server keeps its own scope. A
request without one (no header, another scheme, an empty key) is answered 401 before the MCP
layer reads it; a key Engram does not know comes back as Engram's own ``authentication_failed``.
The server never acts as a key of its own over HTTP: an ``ENGRAM_API_KEY`` in its environment
is ignored, with a warning at start.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

import uvicorn
from engram_client import Engram
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, ValidationError
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from typing_extensions import override

from apps.mcp.tools import (
    AUTHENTICATION_REQUIRED,
    AUTHENTICATION_REQUIRED_MESSAGE,
    INSTRUCTIONS,
    TOOLS,
    EngramState,
    ToolSpec,
    bearer_key,
    tool_error,
)

SERVER_NAME = "engram"
SERVER_VERSION = "0.1.0"
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765
DEFAULT_HTTP_PATH = "/mcp"
HTTP_KEY_IGNORED_WARNING = (
    "engram-mcp: ENGRAM_API_KEY is ignored over HTTP; every request acts as the key in its own "
    "Authorization: Bearer header\n"
)

Lifespan = Callable[[MCPServer[EngramState]], AbstractAsyncContextManager[EngramState]]


class ClosedTool(Tool):
    """A tool whose undeclared or malformed arguments are an ``invalid_arguments`` tool error.

    The SDK's own report of a validation failure is a pydantic dump; this one names each
    offending argument and the arguments the tool does take, under a stable code.
    """

    @override
    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            problems = {
                ".".join(str(part) for part in error["loc"]) or "arguments": error["msg"]
                for error in exc.errors()
            }
            accepted = sorted(self.parameters.get("properties", {}))
            message = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
            return tool_error(
                "invalid_arguments",
                f"{message} (this tool takes: {', '.join(accepted)})",
                {"fields": problems},
            )
        return await super().run(arguments, context, convert_result)


def _closed_tool(spec: ToolSpec) -> ClosedTool:
    """The SDK's tool for ``spec.fn``, with undeclared arguments refused rather than dropped.

    The SDK derives each tool's argument model from the function signature and, by default,
    ignores arguments the function does not declare. A subclass that forbids extras makes the
    published schema say ``additionalProperties: false`` and the server reject such a call.
    """
    tool = Tool.from_function(spec.fn, annotations=spec.annotations)
    declared = tool.fn_metadata.arg_model
    closed = cast(
        "type[ArgModelBase]",
        type(
            declared.__name__,
            (declared,),
            {"model_config": ConfigDict(extra="forbid"), "__module__": declared.__module__},
        ),
    )
    fields = {name: getattr(tool, name) for name in Tool.model_fields}
    # Published, not enforced here: the client has already parsed the body into that model.
    output_schema = spec.output.model_json_schema(by_alias=True, mode="serialization")
    fields["fn_metadata"] = tool.fn_metadata.model_copy(
        update={"arg_model": closed, "output_schema": output_schema}
    )
    fields["parameters"] = closed.model_json_schema(by_alias=True)
    return ClosedTool(**fields)


class BearerRequired:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <key>`` is answered 401.

    The answer carries ``WWW-Authenticate: Bearer`` and Engram's error envelope under the code
    ``authentication_required``. Whether the key is one Engram knows is the API's to say, on
    the first tool call that uses it.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and bearer_key(Headers(scope=scope).get("authorization")) is None
        ):
            response = JSONResponse(
                {
                    "error": {
                        "code": AUTHENTICATION_REQUIRED,
                        "message": AUTHENTICATION_REQUIRED_MESSAGE,
                        "details": {},
                    }
                },
                status_code=401,
                headers={"WWW-Authenticate": f'Bearer realm="{SERVER_NAME}"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _lifespan(engram: Engram, *, caller_keys: bool) -> Lifespan:
    @asynccontextmanager
    async def lifespan(_server: MCPServer[EngramState]) -> AsyncIterator[EngramState]:
        yield EngramState(engram=engram, caller_keys=caller_keys)

    return lifespan


def build_server(engram: Engram, *, caller_keys: bool = False) -> MCPServer[EngramState]:
    """The MCP server, its tools calling the Engram API through ``engram`` (owned by the
    caller, who closes it): as ``engram``'s own key, or with ``caller_keys`` as the key each
    request carries (see :class:`EngramState`)."""
    return MCPServer(
        SERVER_NAME,
        title="Engram",
        description="Long-term memory and a shared knowledge base for AI agents.",
        instructions=INSTRUCTIONS,
        version=SERVER_VERSION,
        tools=[_closed_tool(spec) for spec in TOOLS],
        lifespan=_lifespan(engram, caller_keys=caller_keys),
    )


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="engram-mcp",
        description="Engram's MCP server. Reads ENGRAM_API_URL (default http://127.0.0.1:8000), "
        "ENGRAM_API_KEY and, for an operator's superadmin key, ENGRAM_IMPERSONATE_TENANT.",
    )
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default; for a harness to spawn) or http (streamable HTTP).",
    )
    parser.add_argument("--host", default=DEFAULT_HTTP_HOST, help="HTTP bind address.")
    parser.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help="HTTP port.")
    parser.add_argument("--path", default=DEFAULT_HTTP_PATH, help="HTTP endpoint path.")
    return parser.parse_args(argv)


def _serve_http(server: MCPServer[EngramState], args: argparse.Namespace) -> None:
    app = server.streamable_http_app(streamable_http_path=args.path, host=args.host)
    uvicorn.run(
        BearerRequired(app),
        host=args.host,
        port=args.port,
        log_level=server.settings.log_level.lower(),
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    if args.transport == "http":
        # Each request brings its own key; the configured one is never used for anyone.
        if os.environ.get("ENGRAM_API_KEY", "").strip():
            sys.stderr.write(HTTP_KEY_IGNORED_WARNING)
        engram = Engram(api_key="")
    else:
        engram = Engram()
        if not engram.options.api_key:
            sys.stderr.write("engram-mcp: ENGRAM_API_KEY is not set\n")
            return 2
    server = build_server(engram, caller_keys=args.transport == "http")
    # httpx logs every API request at INFO; the SDK's own log (stderr) is enough.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        if args.transport == "http":
            _serve_http(server, args)
        else:
            server.run("stdio")
    finally:
        engram.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
