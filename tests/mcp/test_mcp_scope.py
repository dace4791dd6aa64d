"""Scope-blindness: no MCP tool can be pointed at another tenant or subject.

Two layers, each proven here. The server refuses any undeclared argument (``tenant_id``,
``subject_id``, …) before a request is built, so nothing is sent; and whatever an agent does
send, the API scopes by the key, so another subject's memory stays unseen and untouched.
"""

import json
import uuid

import httpx
import pytest

from apps.mcp.client import EngramClientConfig
from apps.memory.models import Memory, PromotionJob, SessionMemory
from apps.memory.services import memory_embed_pending
from tests.mcp.helpers import TOOL_PARAMETERS, McpAgent, text_of

VALID_ARGUMENTS = {
    "memory_remember": {"text": "a fact"},
    "memory_recall": {"query": "a fact"},
    "memory_list": {},
    "memory_forget": {"memory_id": "6f1f1c39-8a43-4a57-9f3f-2f6a4b2f7c11"},
    "memory_promote": {"session_id": "s-1"},
    "memory_graduate": {"memory_id": "6f1f1c39-8a43-4a57-9f3f-2f6a4b2f7c11"},
    "recall_context": {"query": "a fact"},
    "recall_referenced": {
        "recall_id": "0b8c5a53-2f5e-4d7e-9a0e-0d7f7f0e9b21",
        "article_ids": ["6f1f1c39-8a43-4a57-9f3f-2f6a4b2f7c11"],
    },
    "resolve_project": {"slug": "engram"},
    "knowledge_search": {"query": "a fact"},
    "knowledge_create": {"title": "T", "body": "B", "category": "finding"},
}
INJECTIONS = {
    "tenant_id": "11111111-1111-1111-1111-111111111111",
    "subject_id": "agent-b",
    "agent_id": "agent-b",
    "owner_agent_id": "agent-b",
}
SCOPE_WORDS = ("tenant", "subject", "agent_id", "impersonat")


class Recorder:
    """An httpx transport that records each request and answers like the API would."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(204)
        return httpx.Response(200, json={"data": {}, "meta": {}})

    def payloads(self) -> list[dict]:
        return [
            {**dict(request.url.params), **(json.loads(request.content) if request.content else {})}
            for request in self.requests
        ]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def offline_agent(recorder) -> McpAgent:
    config = EngramClientConfig(api_url="http://engram.test", api_key="eng_the_agents_key")
    return McpAgent(config, subject_id="agent-a", transport=httpx.MockTransport(recorder))


@pytest.mark.parametrize("injected", sorted(INJECTIONS))
@pytest.mark.parametrize("tool", sorted(VALID_ARGUMENTS))
def test_an_injected_scope_argument_is_refused_and_nothing_is_sent(
    offline_agent, recorder, tool, injected
):
    result = offline_agent.call(tool, **VALID_ARGUMENTS[tool], **{injected: INJECTIONS[injected]})

    accepted = ", ".join(sorted(TOOL_PARAMETERS[tool]))
    assert result.is_error is True
    assert text_of(result).startswith(
        f"invalid_arguments: {injected}: Extra inputs are not permitted (this tool takes: "
        f"{accepted})"
    )
    assert result.structured_content["error"]["details"] == {
        "fields": {injected: "Extra inputs are not permitted"}
    }
    assert recorder.requests == []


@pytest.mark.parametrize("tool", sorted(VALID_ARGUMENTS))
def test_a_valid_call_sends_the_configured_key_and_no_scope_field(offline_agent, recorder, tool):
    offline_agent.ok(tool, **VALID_ARGUMENTS[tool])

    (request,) = recorder.requests
    sent = recorder.payloads()[0]
    assert request.headers["authorization"] == "Bearer eng_the_agents_key"
    assert "x-impersonate-tenant" not in request.headers
    assert [key for key in sent if any(word in key for word in SCOPE_WORDS)] == []


def test_no_tool_declares_a_scope_parameter(offline_agent):
    declared = {
        tool.name: [
            name
            for name in tool.input_schema["properties"]
            if any(word in name for word in SCOPE_WORDS)
        ]
        for tool in offline_agent.tools().tools
    }

    assert declared == {name: [] for name in VALID_ARGUMENTS}


@pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])
def test_another_subjects_memory_stays_unseen_and_untouched(
    mcp_agent, mcp_peer, mcp_foreigner, tenant
):
    theirs = mcp_peer.ok("memory_remember", text="agent-b's secret plan")["data"]
    mine = mcp_agent.ok("memory_remember", text="agent-a's own note")["data"]
    memory_embed_pending(memory_ids=[theirs["id"], mine["id"]])
    attempts = [
        ("memory_list", {}),
        ("memory_recall", {"query": "agent-b's secret plan"}),
        ("memory_forget", {"memory_id": theirs["id"]}),
        ("memory_graduate", {"memory_id": theirs["id"]}),
    ]
    injected = {"tenant_id": str(tenant.pk), "subject_id": "agent-b"}

    refusals = [mcp_agent.fails(tool, **arguments, **injected) for tool, arguments in attempts]
    listed = mcp_agent.ok("memory_list")["data"]
    recalled = mcp_agent.ok("memory_recall", query="agent-b's secret plan", limit=10)["data"]
    forget = mcp_agent.fails("memory_forget", memory_id=theirs["id"])
    foreign_list = mcp_foreigner.ok("memory_list")["data"]
    foreign_forget = mcp_foreigner.fails("memory_forget", memory_id=mine["id"])

    assert [refusal.split(" (")[0] for refusal in refusals] == [
        "invalid_arguments: tenant_id: Extra inputs are not permitted; "
        "subject_id: Extra inputs are not permitted"
    ] * 4
    assert [m["id"] for m in listed] == [mine["id"]]
    assert [hit["memory"]["id"] for hit in recalled] == [mine["id"]]
    assert forget.startswith("not_found: ")
    assert foreign_list == []
    assert foreign_forget.startswith("not_found: ")
    assert sorted(Memory.objects.values_list("subject_id", "text", "superseded_by")) == [
        ("agent-a", "agent-a's own note", None),
        ("agent-b", "agent-b's secret plan", None),
    ]
    assert [m["id"] for m in mcp_peer.ok("memory_list")["data"]] == [theirs["id"]]


@pytest.mark.django_db(transaction=True)
def test_promoting_another_subjects_session_sees_none_of_its_turns(mcp_agent, mcp_peer):
    for text in ("b's first turn", "b's second turn"):
        mcp_peer.ok("memory_remember", tier="session", session_id="shared-name", text=text)

    refused = mcp_agent.fails("memory_promote", session_id="shared-name", subject_id="agent-b")
    promoted = mcp_agent.ok("memory_promote", session_id="shared-name")["data"]

    assert refused.startswith("invalid_arguments: subject_id: Extra inputs are not permitted")
    assert (promoted["reason"], promoted["enqueued"]) == ("too_few_turns", False)
    assert PromotionJob.objects.count() == 0
    assert set(SessionMemory.objects.values_list("subject_id", flat=True)) == {"agent-b"}


def test_a_uuid_path_argument_cannot_reshape_the_url(offline_agent, recorder):
    error = offline_agent.fails("memory_forget", memory_id="../tenancy/whoami")
    referenced = offline_agent.fails(
        "recall_referenced", recall_id=f"{uuid.uuid4()}/../../memory", article_ids=[]
    )

    assert error.startswith("invalid_arguments: memory_id: Input should be a valid UUID")
    assert referenced.startswith("invalid_arguments: recall_id: Input should be a valid UUID")
    assert recorder.requests == []
