"""A breaker's blast radius is one provider configuration, and callers' input never trips one."""

from __future__ import annotations

import pytest

from apps.memory.models import Memory
from apps.memory.services import memory_embed_pending
from apps.providers.embeddings import EmbeddingConfig, EmbeddingsUnavailable, embed_texts
from apps.tenancy.models import ApiKeyRole
from apps.tenancy.selectors import tenant_embedding_config
from apps.tenancy.services import tenant_configure_embedding_provider
from tests.providers.fake_http import (
    FakeHttpServer,
    FakeResponse,
    error_payload,
    openai_embeddings_payload,
)

RECALL = "/api/v1/memory/recall"
PATH = "/v1/embeddings"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


@pytest.fixture
def breaker_settings(settings):
    settings.PROVIDER_BREAKER_FAILURE_THRESHOLD = 5
    settings.PROVIDER_BREAKER_RESET_SECONDS = 30
    return settings


def _recall_meta(caller, query: str = "tea") -> dict[str, object]:
    response = caller.post(RECALL, {"query": query})
    assert response.status_code == 200
    meta: dict[str, object] = response.json()["meta"]
    return meta


def _remember(caller, text: str) -> None:
    response = caller.post("/api/v1/memory", {"text": text})
    assert response.status_code == 201
    memory_embed_pending(memory_ids=[response.json()["data"]["id"]])


def test_six_lone_surrogate_recalls_leave_another_tenants_recall_healthy(
    agent, foreign_agent, breaker_settings
):
    _remember(foreign_agent, "green tea every morning")

    attacks = [
        agent.client.post(RECALL, '{"query": "a\\ud800"}', content_type="application/json")
        for _ in range(6)
    ]

    assert [response.status_code for response in attacks] == [422] * 6
    assert {response.json()["error"]["code"] for response in attacks} == {"invalid_text"}
    meta = _recall_meta(foreign_agent)
    assert (meta["fallback"], meta["reason"]) == (False, None)
    assert _recall_meta(agent)["fallback"] is False


def test_text_the_model_refuses_fails_the_call_but_not_the_breaker(breaker_settings):
    # The local model's tokenizer refuses a lone surrogate with a TypeError: the caller's
    # input, not a provider fault.
    config = EmbeddingConfig(provider="local")

    for _ in range(6):
        with pytest.raises(EmbeddingsUnavailable) as excinfo:
            embed_texts(config, ["a\ud800"])
        assert excinfo.value.reason == "provider_error"

    assert len(embed_texts(config, ["still answering"])) == 1


def test_a_tenants_own_failing_provider_never_trips_the_default(
    make_caller, tenant, other_tenant, fake_http: FakeHttpServer, breaker_settings
):
    fake_http.respond(
        "POST", PATH, FakeResponse(json_body=openai_embeddings_payload([[1.0] * 384]))
    )
    tenant_configure_embedding_provider(
        tenant=tenant, provider="openai", config={"base_url": fake_http.url("/v1")}, api_key="sk"
    )
    own = make_caller(tenant, ApiKeyRole.AGENT, agent_id="byo")
    shared = make_caller(other_tenant, ApiKeyRole.AGENT, agent_id="default")
    _remember(shared, "green tea every morning")
    fake_http.respond("POST", PATH, FakeResponse(status=503, json_body=error_payload()))

    reasons = [_recall_meta(own)["reason"] for _ in range(6)]

    assert reasons == ["provider_error"] * 5 + ["circuit_open"]
    meta = _recall_meta(shared)
    assert (meta["fallback"], meta["reason"]) == (False, None)
    assert Memory.objects.filter(tenant=other_tenant, embedded_at__isnull=False).count() == 1


def test_a_tenants_own_provider_naming_the_default_endpoint_has_its_own_breaker(tenant):
    default = EmbeddingConfig.default()
    tenant.embedding_provider = default.provider
    tenant.save(update_fields=["embedding_provider"])

    own = tenant_embedding_config(tenant=tenant)

    assert own.endpoint_key == default.endpoint_key
    assert own.breaker_key != default.breaker_key
