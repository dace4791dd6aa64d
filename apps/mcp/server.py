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

Over streamable HTTP each request's own ``Authorization: Bearer <key>`` is forwarded, so every
agent connecting to one shared server keeps its own scope; ``ENGRAM_API_KEY`` is then only a
fallback for requests that carry none (leave it unset on a server other machines can reach).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

from engram_client import Engram
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, ValidationError
from typing_extensions import override

from apps.mcp.tools import INSTRUCTIONS, TOOLS, EngramState, ToolSpec, tool_error

SERVER_NAME = "engram"
SERVER_VERSION = "0.1.0"
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765
DEFAULT_HTTP_PATH = "/mcp"

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
    fields["fn_metadata"] = tool.fn_metadata.model_copy(update={"arg_model": closed})
    fields["parameters"] = closed.model_json_schema(by_alias=True)
    return ClosedTool(**fields)


def _lifespan(engram: Engram) -> Lifespan:
    @asynccontextmanager
    async def lifespan(_server: MCPServer[EngramState]) -> AsyncIterator[EngramState]:
        yield EngramState(engram=engram)

    return lifespan


def build_server(engram: Engram) -> MCPServer[EngramState]:
    """The MCP server, its tools calling the Engram API through ``engram`` (owned by the
    caller, who closes it)."""
    return MCPServer(
        SERVER_NAME,
        title="Engram",
        description="Long-term memory and a shared knowledge base for AI agents.",
        instructions=INSTRUCTIONS,
        version=SERVER_VERSION,
        tools=[_closed_tool(spec) for spec in TOOLS],
        lifespan=_lifespan(engram),
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    engram = Engram()
    # Over HTTP each caller may bring its own key, so the configured one is optional.
    if args.transport == "stdio" and not engram.options.api_key:
        sys.stderr.write("engram-mcp: ENGRAM_API_KEY is not set\n")
        return 2
    server = build_server(engram)
    # httpx logs every API request at INFO; the SDK's own log (stderr) is enough.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        if args.transport == "http":
            server.run(
                "streamable-http", host=args.host, port=args.port, streamable_http_path=args.path
            )
        else:
            server.run("stdio")
    finally:
        engram.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
