"""What the tool list promises, held to what the tools do against a live Engram server."""

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from apps.memory.services import memory_embed_pending
from apps.projects.services import project_create
from tests.mcp.helpers import REQUIRED_PARAMETERS, TOOL_PARAMETERS, McpAgent

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

ARTICLE = {
    "title": "Friday deploy freeze",
    "body": "We never deploy to production on Fridays; hotfixes for incidents are the exception.",
    "category": "decision",
}


def _required_only_calls(agent: McpAgent) -> dict[str, dict[str, Any]]:
    """Every tool but resolve_project, called with its required arguments alone: tool → body."""
    bodies: dict[str, dict[str, Any]] = {}

    def ok(tool: str, **arguments: Any) -> dict[str, Any]:
        assert set(arguments) == REQUIRED_PARAMETERS[tool], tool
        bodies[tool] = agent.ok(tool, **arguments)
        return bodies[tool]

    memory = ok("memory_remember", text="Staging resets every night at 02:00 UTC")["data"]
    memory_embed_pending(memory_ids=[memory["id"]])
    ok("memory_recall", query="when does staging reset?")
    ok("memory_list")
    ok("memory_graduate", memory_id=memory["id"])
    article = ok("knowledge_create", **ARTICLE)["data"]["article"]
    ok("knowledge_search", query="deploy on fridays")
    ok("knowledge_context", query="deploy on fridays")
    recalled = ok("recall_context", query="deploy on fridays")
    ok("recall_referenced", recall_id=recalled["meta"]["recall_id"], article_ids=[article["id"]])
    ok("memory_promote", session_id="s-1")
    ok("memory_forget", memory_id=memory["id"])
    return bodies


def test_each_tool_requires_exactly_the_arguments_it_cannot_work_without(mcp_agent):
    tools = mcp_agent.tools().tools

    assert {tool.name: set(tool.input_schema.get("required", [])) for tool in tools} == (
        REQUIRED_PARAMETERS
    )


def test_every_tool_works_with_only_its_required_arguments(mcp_agent, tenant):
    project_create(tenant=tenant, name="Billing service", slug="billing")

    bodies = _required_only_calls(mcp_agent)
    no_identifier = mcp_agent.fails("resolve_project")
    description = {tool.name: tool.description for tool in mcp_agent.tools().tools}

    assert set(bodies) | {"resolve_project"} == set(REQUIRED_PARAMETERS)
    # resolve_project needs one of its three identifiers, whichever: each is optional alone,
    # and the description says so (the Anthropic API refuses a top-level anyOf in a schema).
    assert no_identifier.startswith("no_identifier: ")
    assert "no_identifier if you pass none" in (description["resolve_project"] or "")
    assert mcp_agent.ok("resolve_project", slug="billing")["data"]["slug"] == "billing"


def test_knowledge_context_without_a_query_is_refused_by_the_server(mcp_agent):
    refused = mcp_agent.fails("knowledge_context", limit=2)

    assert refused.startswith("invalid_arguments: query: Field required (this tool takes: ")


def _errors(schema: dict[str, Any], body: dict[str, Any]) -> list[str]:
    validator = validator_for(schema, default=Draft202012Validator)
    validator.check_schema(schema)
    return [error.message for error in validator(schema).iter_errors(body)]


def test_every_tool_declares_an_output_schema_that_its_results_validate_against(mcp_agent, tenant):
    project_create(tenant=tenant, name="Billing service", slug="billing")
    bodies = _required_only_calls(mcp_agent)
    bodies["resolve_project"] = mcp_agent.ok("resolve_project", slug="billing")
    turn = mcp_agent.ok("memory_remember", text="Hello", tier="session", session_id="s-2")

    schemas = {tool.name: tool.output_schema for tool in mcp_agent.tools().tools}

    assert set(bodies) == set(schemas)
    assert {name: schema is not None for name, schema in schemas.items()} == dict.fromkeys(
        schemas, True
    )
    assert {name: _errors(schemas[name], body) for name, body in bodies.items()} == {
        name: [] for name in schemas
    }
    assert _errors(schemas["memory_remember"], turn) == []
    assert (turn["data"]["tier"], turn["data"]["session_id"]) == ("session", "s-2")
    # Each schema is the tool's own: another tool's body does not pass it.
    assert _errors(schemas["memory_list"], bodies["memory_recall"]) != []
    assert _errors(schemas["memory_forget"], bodies["memory_promote"]) != []
    assert _errors(schemas["knowledge_context"], bodies["knowledge_search"]) != []


# ----------------------------------------------------------------------------- the agents' guide

AGENTS_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
NUMBERS += "fifteen sixteen seventeen eighteen nineteen twenty"
TOOLS_TABLE_HEADER = "| Tool | Arguments | HTTP | Use it |"
ARGUMENT = re.compile(r"`(?P<name>[a-z_]+)(?P<optional>\??)(?::[^`]*)?`")


def _tools_table(guide: str) -> dict[str, str]:
    """The guide's table of tools: each tool's name → its Arguments cell, in order."""
    lines = guide.splitlines()
    start = lines.index(TOOLS_TABLE_HEADER) + 2  # past the header and its |---| rule
    rows: dict[str, str] = {}
    for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start:]):
        _, tool, arguments, *_ = re.split(r"(?<!\\)\|", line)
        rows[tool.strip().strip("`")] = arguments
    return rows


def test_the_agents_guide_counts_and_lists_every_tool_with_its_arguments(mcp_agent):
    guide = AGENTS_GUIDE.read_text()
    tools = [tool.name for tool in mcp_agent.tools().tools]
    (count,) = re.findall(r"It exposes (\w+) tools", guide)
    table = _tools_table(guide)
    arguments = {tool: list(ARGUMENT.finditer(cell)) for tool, cell in table.items()}

    assert NUMBERS.split().index(count) == len(tools)
    assert list(table) == tools
    assert {tool: {a["name"] for a in found} for tool, found in arguments.items()} == (
        TOOL_PARAMETERS
    )
    # Written without "?": required, but for the session tier's session_id.
    assert {
        tool: {a["name"] for a in found if not a["optional"]} for tool, found in arguments.items()
    } == REQUIRED_PARAMETERS | {"memory_remember": {"text", "session_id"}}
