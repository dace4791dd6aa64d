"""Helpers for the MCP tests: an agent's MCP connection and the tool list it must see."""

from __future__ import annotations

from typing import Any

import anyio
from engram_client import Engram
from mcp import Client
from mcp_types import CallToolResult, ListToolsResult

from apps.mcp.server import build_server

#: Every tool and exactly the arguments it declares (none of them a tenant or subject).
TOOL_PARAMETERS = {
    "memory_remember": {
        "text",
        "tags",
        "metadata",
        "project_id",
        "supersedes",
        "valid_from",
        "tier",
        "session_id",
        "role",
        "ttl_seconds",
    },
    "memory_recall": {"query", "project_id", "limit", "include_superseded", "as_of", "filter"},
    "memory_list": {
        "project_id",
        "source",
        "include_superseded",
        "limit",
        "offset",
        "all_subjects",
        "as_of",
        "filter",
    },
    "memory_forget": {"memory_id"},
    "memory_promote": {"session_id"},
    "memory_graduate": {"memory_id", "re_scope"},
    "recall_context": {"query", "project_id", "limit", "session_id", "as_of"},
    "recall_referenced": {"recall_id", "article_ids"},
    "resolve_project": {"repo_url", "slug", "name"},
    "knowledge_search": {"query", "limit", "project_id", "session_id"},
    "knowledge_create": {"title", "body", "category", "tags", "project_id", "visibility"},
    "knowledge_context": {"query", "limit", "project_id"},
}

#: The arguments each tool cannot work without: exactly its input schema's ``required``.
REQUIRED_PARAMETERS = {
    "memory_remember": {"text"},
    "memory_recall": {"query"},
    "memory_list": set(),
    "memory_forget": {"memory_id"},
    "memory_promote": {"session_id"},
    "memory_graduate": {"memory_id"},
    "recall_context": {"query"},
    "recall_referenced": {"recall_id", "article_ids"},
    "resolve_project": set(),
    "knowledge_search": {"query"},
    "knowledge_create": {"title", "body", "category"},
    "knowledge_context": {"query"},
}


class McpAgent:
    """One agent's MCP connection: call tools synchronously and read their results."""

    def __init__(self, engram: Engram, subject_id: str) -> None:
        self.engram = engram
        self.subject_id = subject_id
        self.server = build_server(engram)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        async with Client(self.server) as client:
            return await client.call_tool(tool, arguments)

    async def _list(self) -> ListToolsResult:
        async with Client(self.server) as client:
            return await client.list_tools()

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return anyio.run(self._call, tool, arguments)

    def tools(self) -> ListToolsResult:
        return anyio.run(self._list)

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The API body of a successful call (``{"data", "meta"}``)."""
        result = self.call(tool, **arguments)
        assert result.is_error is False, text_of(result)
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    def fails(self, tool: str, **arguments: Any) -> str:
        """The text of a call that must come back as a tool error."""
        result = self.call(tool, **arguments)
        assert result.is_error is True, text_of(result)
        return text_of(result)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")
