"""Scope-blindness: no MCP tool can be pointed at another tenant or subject.

Two layers, each proven here. The server refuses any undeclared argument (``tenant_id``,
``subject_id``, …) before a request is built, so nothing is sent; and whatever an agent does
send, the API scopes by the key, so another subject's memory stays unseen and untouched.
"""

import json
import re
import types
import typing
import uuid
from datetime import datetime

import httpx
import pytest
from engram_client import Engram, models
from pydantic import BaseModel

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
    "knowledge_context": {"query": "a fact"},
}
INJECTIONS = {
    "tenant_id": "11111111-1111-1111-1111-111111111111",
    "subject_id": "agent-b",
    "agent_id": "agent-b",
    "owner_agent_id": "agent-b",
}
SCOPE_WORDS = ("tenant", "subject", "agent_id", "impersonat")


def sample(annotation):
    """A minimal JSON value the client's model for ``annotation`` accepts."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        return None if type(None) in args else sample(args[0])
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    if origin in (list, dict):
        return origin()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {
            info.alias or name: sample(info.annotation)
            for name, info in annotation.model_fields.items()
            if info.is_required()
        }
    values = {str: "x", int: 0, float: 0.0, bool: False, datetime: "2026-01-01T00:00:00Z"}
    return values.get(annotation, str(uuid.uuid4()))


def _data(model):
    return {"data": sample(model), "meta": {}}


#: What the API answers each (method, path) with, shaped like the real responses.
ANSWERS = [
    ("POST", r"/api/v1/memory/recall", lambda: sample(models.MemoryRecall)),
    ("POST", r"/api/v1/memory/promote", lambda: _data(models.PromotionResult)),
    ("POST", r"/api/v1/memory/graduate", lambda: _data(models.GraduationResult)),
    ("GET", r"/api/v1/memory", lambda: sample(models.MemoryPage)),
    ("POST", r"/api/v1/recall", lambda: sample(models.MergedRecall)),
    ("POST", r"/api/v1/recall/[^/]+/referenced", lambda: _data(models.RecallReferenced)),
    ("GET", r"/api/v1/projects/resolve", lambda: _data(models.Project)),
    ("POST", r"/api/v1/knowledge/search", lambda: sample(models.KnowledgeSearch)),
    ("POST", r"/api/v1/knowledge/articles", lambda: _data(models.ArticleProposal)),
    ("POST", r"/api/v1/knowledge/context", lambda: sample(models.KnowledgeContext)),
]


class Recorder:
    """An httpx transport that records each request and answers like the API would."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(204)
        if request.method == "POST" and request.url.path == "/api/v1/memory":
            sent = json.loads(request.content)
            model = models.SessionTurn if sent.get("tier") == "session" else models.Memory
            return httpx.Response(201, json=_data(model))
        for method, pattern, answer in ANSWERS:
            if request.method == method and re.fullmatch(pattern, request.url.path):
                return httpx.Response(200, json=answer())
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "?"}})

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
    engram = Engram(
        "http://engram.test", "eng_the_agents_key", transport=httpx.MockTransport(recorder)
    )
    return McpAgent(engram, subject_id="agent-a")


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
    # memory_list's all_subjects names no scope: the API honours it only for a superadmin
    # key, on the tenant that key's configuration impersonates.
    declared = {
        tool.name: [
            name
            for name in tool.input_schema["properties"]
            if any(word in name for word in SCOPE_WORDS)
        ]
        for tool in offline_agent.tools().tools
    }

    assert declared == {name: [] for name in VALID_ARGUMENTS} | {"memory_list": ["all_subjects"]}


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
