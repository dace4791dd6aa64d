"""The MCP server's memory and project tools, round-tripped through a live Engram server."""

import json
import uuid

import pytest
from engram_client import Engram

from apps.memory.models import Memory, PromotionJob, SessionMemory
from apps.memory.services import memory_embed_pending, promotion_run
from apps.projects.services import project_create
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.services import api_key_create
from tests.mcp.helpers import TOOL_PARAMETERS, McpAgent, text_of
from tests.memory.promotion_pipeline.conftest import FakePromoter, fact

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def _remember(agent: McpAgent, text: str, **arguments):
    """Write a long-term memory and embed it at once (the worker does this in production)."""
    memory = agent.ok("memory_remember", text=text, **arguments)["data"]
    memory_embed_pending(memory_ids=[memory["id"]])
    return memory


# ----------------------------------------------------------------------------- the tool list


def test_every_tool_is_listed_with_a_closed_schema_and_no_scope_parameter(mcp_agent):
    tools = {tool.name: tool for tool in mcp_agent.tools().tools}

    assert {name: set(tool.input_schema["properties"]) for name, tool in tools.items()} == (
        TOOL_PARAMETERS
    )
    assert {name: tool.input_schema["additionalProperties"] for name, tool in tools.items()} == (
        dict.fromkeys(TOOL_PARAMETERS, False)
    )


def test_the_descriptions_say_when_to_use_which_layer(mcp_agent):
    tools = {tool.name: tool.description for tool in mcp_agent.tools().tools}
    instructions = mcp_agent.server.instructions

    assert "WORTH ANOTHER AGENT READING" in tools["knowledge_create"]
    assert "memory_remember" in tools["knowledge_create"]
    assert "PRIVATE fact" in tools["memory_remember"]
    assert "knowledge_create" in tools["memory_remember"]
    assert "END of a session" in tools["memory_promote"]
    assert "START of a task" in tools["recall_context"]
    assert "recall_referenced" in tools["recall_context"]
    assert instructions is not None
    for rule in (
        "Worth another agent reading",
        "-> knowledge_create",
        "-> memory_remember",
        "-> recall_context",
        "-> memory_promote",
        "-> memory_graduate",
        "come from your API key",
    ):
        assert rule in instructions


# ----------------------------------------------------------------------------- memory


def test_remember_then_recall_finds_the_memory(mcp_agent):
    result = mcp_agent.call("memory_remember", text="The user prefers tabs", tags=["style"])
    memory = result.structured_content["data"]
    memory_embed_pending(memory_ids=[memory["id"]])

    recalled = mcp_agent.ok("memory_recall", query="tabs or spaces?")

    assert json.loads(text_of(result)) == result.structured_content
    assert {k: memory[k] for k in ("tier", "text", "tags", "subject_id", "source")} == {
        "tier": "long_term",
        "text": "The user prefers tabs",
        "tags": ["style"],
        "subject_id": "agent-a",
        "source": "explicit",
    }
    assert [hit["memory"]["id"] for hit in recalled["data"]] == [memory["id"]]
    assert recalled["data"][0]["memory"]["embedding_status"] == "ready"
    assert recalled["data"][0]["score"] is not None
    assert recalled["meta"]["fallback"] is False
    assert Memory.objects.get(pk=memory["id"]).subject_id == "agent-a"


def test_a_memory_can_supersede_another_and_list_pages_newest_first(mcp_agent):
    old = _remember(mcp_agent, "Deploys go out on Fridays")
    new = _remember(mcp_agent, "Deploys go out on Thursdays", supersedes=old["id"])
    other = _remember(mcp_agent, "CI runs on every push", metadata={"source": "ci.yml"})

    live = mcp_agent.ok("memory_list")
    everything = mcp_agent.ok("memory_list", include_superseded=True)
    second_page = mcp_agent.ok("memory_list", limit=1, offset=1)
    promoted = mcp_agent.ok("memory_list", source="promoted")
    recalled = mcp_agent.ok("memory_recall", query="when do deploys go out?", limit=5)

    assert [m["id"] for m in live["data"]] == [other["id"], new["id"]]
    assert live["meta"] == {"total_count": 2, "limit": 50, "offset": 0}
    assert [m["id"] for m in everything["data"]] == [other["id"], new["id"], old["id"]]
    assert everything["data"][2]["superseded_by"] == new["id"]
    assert [m["id"] for m in second_page["data"]] == [new["id"]]
    assert promoted["data"] == []
    assert old["id"] not in {hit["memory"]["id"] for hit in recalled["data"]}
    assert other["metadata"] == {"source": "ci.yml"}


def test_forget_deletes_the_memory(mcp_agent):
    memory = _remember(mcp_agent, "Temporary fact")

    forgotten = mcp_agent.ok("memory_forget", memory_id=memory["id"])
    again = mcp_agent.fails("memory_forget", memory_id=memory["id"])

    assert forgotten == {"data": {"id": memory["id"], "forgotten": True}, "meta": {}}
    assert again.startswith("not_found: ")
    assert mcp_agent.ok("memory_list")["data"] == []
    assert Memory.objects.count() == 0


def test_session_turns_are_promoted_into_long_term_memory(mcp_agent, tenant, fake_http):
    tenant.llm_provider = "openai"
    tenant.llm_config = {"base_url": fake_http.url("/v1"), "model": "fake"}
    tenant.save()
    promoter = FakePromoter(fake_http)
    promoter.says(fact("The user always formats with ruff."))
    for role, text in (("user", "I always format with ruff"), ("assistant", "Noted.")):
        mcp_agent.ok("memory_remember", tier="session", session_id="s-1", role=role, text=text)
    mcp_agent.ok("memory_remember", tier="session", session_id="s-2", text="lonely turn")

    enqueued = mcp_agent.ok("memory_promote", session_id="s-1")["data"]
    queued = mcp_agent.ok("memory_promote", session_id="s-1")["data"]
    too_few = mcp_agent.ok("memory_promote", session_id="s-2")["data"]
    promotion_run(job_id=PromotionJob.objects.get().pk)
    unchanged = mcp_agent.ok("memory_promote", session_id="s-1")["data"]
    promoted = mcp_agent.ok("memory_list", source="promoted")["data"]

    turns = SessionMemory.objects.filter(session_id="s-1").order_by("seq")
    assert [(t.subject_id, t.role, t.content) for t in turns] == [
        ("agent-a", "user", "I always format with ruff"),
        ("agent-a", "assistant", "Noted."),
    ]
    assert (enqueued["reason"], enqueued["enqueued"]) == ("enqueued", True)
    assert (queued["reason"], queued["job_id"]) == ("already_queued", enqueued["job_id"])
    assert (too_few["reason"], too_few["job_id"]) == ("too_few_turns", None)
    assert unchanged["reason"] == "unchanged"
    assert [(m["text"], m["source_session_id"]) for m in promoted] == [
        ("The user always formats with ruff.", "s-1")
    ]
    assert len(promoter.calls) == 1


def test_session_only_arguments_are_refused_on_a_long_term_write_and_vice_versa(mcp_agent):
    on_long_term = mcp_agent.fails("memory_remember", text="x", session_id="s-1")
    on_session = mcp_agent.fails(
        "memory_remember", text="x", tier="session", session_id="s-1", tags=["a"]
    )

    assert on_long_term == (
        'invalid_arguments: session_id: applies only to tier="session" '
        '{"fields":{"session_id":"applies only to tier=\\"session\\""}}'
    )
    assert on_session.startswith('invalid_arguments: tags: applies only to tier="long_term" ')
    assert (Memory.objects.count(), SessionMemory.objects.count()) == (0, 0)


# ----------------------------------------------------------------------------- projects


def test_resolve_project_then_partition_memories_by_it(mcp_agent, tenant):
    project = project_create(
        tenant=tenant, name="Engram", repo_url="https://github.com/acme/engram"
    )
    resolved = mcp_agent.ok("resolve_project", repo_url="git@github.com:acme/engram.git")["data"]
    in_project = _remember(mcp_agent, "The engram repo pins Python 3.11", project_id=resolved["id"])
    global_fact = _remember(mcp_agent, "The user likes short answers")

    without = mcp_agent.ok("memory_recall", query="python version", limit=10)["data"]
    within = mcp_agent.ok(
        "memory_recall", query="python version", limit=10, project_id=resolved["id"]
    )["data"]
    listed_all = mcp_agent.ok("memory_list")["data"]
    listed_in_project = mcp_agent.ok("memory_list", project_id=resolved["id"])["data"]
    elsewhere = mcp_agent.ok("memory_list", project_id=str(uuid.uuid4()))["data"]

    assert (resolved["id"], resolved["slug"]) == (str(project.pk), "engram")
    assert [hit["memory"]["id"] for hit in without] == [global_fact["id"]]
    assert {hit["memory"]["id"] for hit in within} == {global_fact["id"], in_project["id"]}
    assert [m["id"] for m in listed_all] == [global_fact["id"], in_project["id"]]
    assert [m["id"] for m in listed_in_project] == [global_fact["id"], in_project["id"]]
    assert [m["id"] for m in elsewhere] == [global_fact["id"]]
    assert in_project["project_id"] == str(project.pk)


def test_resolve_project_reports_the_apis_codes(mcp_agent, tenant):
    project_create(tenant=tenant, name="Engram", slug="engram")

    by_slug = mcp_agent.ok("resolve_project", slug="engram", name="ignored")["data"]
    missing = mcp_agent.fails("resolve_project", slug="nope")
    nothing = mcp_agent.fails("resolve_project")

    assert by_slug["name"] == "Engram"
    assert missing.startswith("not_found: ")
    assert nothing.startswith("no_identifier: ")


# ----------------------------------------------------------------------------- API errors


def test_forgetting_another_subjects_memory_is_not_found_and_changes_nothing(mcp_agent, mcp_peer):
    theirs = _remember(mcp_peer, "agent-b's private fact")

    error = mcp_agent.fails("memory_forget", memory_id=theirs["id"])

    assert error.startswith("not_found: ")
    assert Memory.objects.get(pk=theirs["id"]).text == "agent-b's private fact"
    assert [m["id"] for m in mcp_peer.ok("memory_list")["data"]] == [theirs["id"]]


def test_an_api_error_is_a_tool_error_carrying_its_code(mcp_agent):
    result = mcp_agent.call("memory_recall", query="x" * 501)

    assert result.is_error is True
    assert text_of(result).startswith("query_too_long: ")
    assert result.structured_content["status"] == 422
    assert result.structured_content["error"]["code"] == "query_too_long"


def test_over_quota_is_quota_exceeded(mcp_agent, settings):
    settings.MEMORY_QUOTA_LIVE_ROWS = 1
    mcp_agent.ok("memory_remember", text="first")

    error = mcp_agent.fails("memory_remember", text="second")

    assert error.startswith("quota_exceeded: ")
    assert '"quota":1' in error
    assert list(Memory.objects.values_list("text", flat=True)) == ["first"]


def test_a_foreign_project_id_on_write_is_invalid_project_id(mcp_agent, other_tenant):
    foreign = project_create(tenant=other_tenant, name="Theirs")

    error = mcp_agent.fails("memory_remember", text="x", project_id=str(foreign.pk))

    assert error.startswith("invalid_project_id: ")
    assert Memory.objects.count() == 0


def test_a_bad_key_is_authentication_failed(live_server):
    agent = McpAgent(Engram(live_server.url, "eng_not_a_key"), subject_id="")

    assert agent.fails("memory_list").startswith("authentication_failed: ")


def test_an_unreachable_api_is_a_tool_error():
    agent = McpAgent(Engram("http://127.0.0.1:9", "k", max_retries=0), "")

    assert agent.fails("memory_list").startswith(
        "engram_unreachable: could not reach Engram at http://127.0.0.1:9: "
    )


# ----------------------------------------------------------------------------- oversight


def test_an_operator_lists_every_subject_and_forgets_any_memory(
    live_server, mcp_agent, mcp_peer, tenant
):
    mine = _remember(mcp_agent, "agent a's fact")
    theirs = _remember(mcp_peer, "agent b's fact")
    issued = api_key_create(tenant=None, role=ApiKeyRole.SUPERADMIN)
    operator = McpAgent(
        Engram(live_server.url, issued.raw_key, impersonate_tenant=tenant.slug), subject_id=""
    )

    overseen = operator.ok("memory_list", all_subjects=True)
    agent_view = mcp_agent.ok("memory_list", all_subjects=True)
    forgotten = operator.ok("memory_forget", memory_id=theirs["id"])

    assert sorted(m["id"] for m in overseen["data"]) == sorted([mine["id"], theirs["id"]])
    assert overseen["meta"]["total_count"] == 2
    assert [m["id"] for m in agent_view["data"]] == [mine["id"]]
    assert forgotten["data"] == {"id": theirs["id"], "forgotten": True}
    assert list(Memory.objects.values_list("subject_id", flat=True)) == ["agent-a"]


def test_an_operator_without_a_tenant_configured_is_told_so(live_server):
    issued = api_key_create(tenant=None, role=ApiKeyRole.SUPERADMIN)
    operator = McpAgent(Engram(live_server.url, issued.raw_key, impersonate_tenant=""), "")

    assert operator.fails("memory_list", all_subjects=True).startswith(
        "impersonation_tenant_required: "
    )


def test_as_of_reads_what_held_then_through_every_recall_tool(mcp_agent, mcp_peer):
    berlin = _remember(mcp_agent, "The user lives in Berlin.", valid_from="2024-03-01T00:00:00Z")
    lisbon = mcp_agent.ok(
        "memory_remember",
        text="The user lives in Lisbon.",
        valid_from="2024-06-01T00:00:00Z",
        supersedes=berlin["id"],
    )["data"]
    theirs = mcp_peer.ok(
        "memory_remember", text="The user lives in Madrid.", valid_from="2024-03-01T00:00:00Z"
    )["data"]
    memory_embed_pending(memory_ids=[berlin["id"], lisbon["id"], theirs["id"]])
    spring = "2024-04-01T00:00:00Z"

    recalled = mcp_agent.ok("memory_recall", query="where does the user live?", as_of=spring)
    listed = mcp_agent.ok("memory_list", as_of=spring)
    merged = mcp_agent.ok("recall_context", query="where does the user live?", as_of=spring)
    now = mcp_agent.ok("memory_recall", query="where does the user live?")

    assert [(h["memory"]["id"], h["validity"]) for h in recalled["data"]] == [
        (berlin["id"], "superseded")
    ]
    assert recalled["meta"]["as_of"] == spring
    assert [m["id"] for m in listed["data"]] == [berlin["id"]]
    assert [i["id"] for i in merged["data"] if i["source"] == "memory"] == [berlin["id"]]
    assert [(h["memory"]["id"], h["validity"]) for h in now["data"]] == [(lisbon["id"], "current")]
    assert (lisbon["valid_from"], lisbon["supersedes"]) == ("2024-06-01T00:00:00Z", [berlin["id"]])


def test_a_malformed_as_of_is_the_apis_validation_error(mcp_agent):
    assert mcp_agent.fails("memory_recall", query="anything", as_of="last spring").startswith(
        "validation_error: as_of: "
    )


def test_recall_and_list_take_a_tag_and_metadata_filter(mcp_agent):
    _remember(mcp_agent, "deploy on friday", tags=["ops"], metadata={"due": "2024-05-03"})
    _remember(mcp_agent, "deploy the docs", tags=["docs"], metadata={"due": "2024-07-01"})
    early = {"tags": "ops", "metadata": {"due": {"$lt": "2024-06-01"}}}

    recalled = mcp_agent.ok("memory_recall", query="deploy", filter=early)
    listed = mcp_agent.ok("memory_list", filter={"tags": {"$in": ["docs"]}})
    refused = mcp_agent.call("memory_recall", query="deploy", filter={"tags": {"$gt": "a"}})

    assert [hit["memory"]["text"] for hit in recalled["data"]] == ["deploy on friday"]
    assert [row["text"] for row in listed["data"]] == ["deploy the docs"]
    assert refused.is_error is True
    assert text_of(refused).startswith("invalid_filter: ")
