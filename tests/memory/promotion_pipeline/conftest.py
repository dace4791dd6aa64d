"""A tenant whose promotion LLM is a local fake OpenAI-compatible server."""

import json

import pytest

from apps.memory.services import SessionTurnDraft, session_append_many
from tests.providers.fake_http import FakeResponse, openai_chat_payload

CHAT_PATH = "/v1/chat/completions"


class FakePromoter:
    def __init__(self, server):
        self.server = server

    def says(self, *memories, raw=None):
        content = raw if raw is not None else json.dumps({"memories": list(memories)})
        self.server.respond_json("POST", CHAT_PATH, openai_chat_payload(content))

    def says_then_decides(self, memories, changes=None, *, decision=None):
        """The compile reply, then the reply to the change-decision call (``changes``: the
        pairs, or ``decision``: a whole response of its own, e.g. an error)."""
        compiled = json.dumps({"memories": list(memories)})
        decided = decision or FakeResponse(
            json_body=openai_chat_payload(json.dumps({"changes": list(changes or [])}))
        )
        self.server.respond(
            "POST", CHAT_PATH, FakeResponse(json_body=openai_chat_payload(compiled)), decided
        )

    def fails(self, status=500):
        self.server.respond_json("POST", CHAT_PATH, {"error": {"message": "boom"}}, status=status)

    @property
    def calls(self):
        return self.server.requests_to(CHAT_PATH)


def fact(text, confidence=0.9, kind="fact", cross_links=()):
    return {"text": text, "confidence": confidence, "kind": kind, "cross_links": list(cross_links)}


@pytest.fixture
def promoter(fake_http, tenant, other_tenant):
    for configured in (tenant, other_tenant):
        configured.llm_provider = "openai"
        configured.llm_config = {"base_url": fake_http.url("/v1"), "model": "fake-model"}
        configured.save()
    return FakePromoter(fake_http)


def add_turns(tenant, subject_id, session_id, *contents, metadata=None, occurred_at=None):
    session_append_many(
        tenant=tenant,
        subject_id=subject_id,
        drafts=[
            SessionTurnDraft(
                session_id=session_id,
                content=content,
                role="user" if index % 2 == 0 else "assistant",
                ttl_seconds=3600,
                metadata=metadata or {},
                occurred_at=occurred_at,
            )
            for index, content in enumerate(contents)
        ],
    )
