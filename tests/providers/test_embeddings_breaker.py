"""The circuit breaker around real HTTP calls: an open circuit sends nothing; the in-process
local model has none."""

from __future__ import annotations

import pytest
import redis

from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_query,
    embed_texts,
)
from tests.providers.conftest import Clock
from tests.providers.fake_http import (
    FakeHttpServer,
    FakeResponse,
    error_payload,
    openai_embeddings_payload,
)
from tests.redis_server import RedisServer, redis_as_the_shared_cache

PATH = "/v1/embeddings"
HEALTHY = FakeResponse(json_body=openai_embeddings_payload([[1.0] * 384]))
BROKEN = FakeResponse(status=503, json_body=error_payload())


@pytest.fixture
def breaker_settings(settings):
    settings.PROVIDER_BREAKER_FAILURE_THRESHOLD = 3
    settings.PROVIDER_BREAKER_RESET_SECONDS = 30
    return settings


def _config(server: FakeHttpServer) -> EmbeddingConfig:
    return EmbeddingConfig(provider="openai", model="m", base_url=server.url("/v1"), api_key="sk")


def _reason(config: EmbeddingConfig) -> str:
    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(config, ["a"])
    return str(excinfo.value.reason)


def _open_the_circuit(server: FakeHttpServer, config: EmbeddingConfig) -> None:
    server.respond("POST", PATH, BROKEN)
    assert [_reason(config) for _ in range(3)] == ["provider_error"] * 3


def test_open_circuit_refuses_without_calling_the_provider(
    fake_http: FakeHttpServer, clock: Clock, breaker_settings
):
    config = _config(fake_http)
    _open_the_circuit(fake_http, config)
    fake_http.respond("POST", PATH, HEALTHY)

    assert _reason(config) == "circuit_open"
    assert _reason(config) == "circuit_open"
    assert len(fake_http.requests) == 3


def test_successful_trial_after_the_reset_time_closes_the_circuit(
    fake_http: FakeHttpServer, clock: Clock, breaker_settings
):
    config = _config(fake_http)
    _open_the_circuit(fake_http, config)
    fake_http.respond("POST", PATH, HEALTHY)
    clock.advance(30)

    assert len(embed_texts(config, ["a"])) == 1
    assert len(embed_texts(config, ["b"])) == 1
    assert len(fake_http.requests) == 5


def test_failed_trial_reopens_the_circuit(
    fake_http: FakeHttpServer, clock: Clock, breaker_settings
):
    config = _config(fake_http)
    _open_the_circuit(fake_http, config)
    clock.advance(30)

    assert _reason(config) == "provider_error"  # the one trial reached the provider
    assert _reason(config) == "circuit_open"
    assert len(fake_http.requests) == 4


def test_rejections_do_not_open_a_circuit_shared_with_other_tenants(
    fake_http: FakeHttpServer, clock: Clock, breaker_settings
):
    config = _config(fake_http)
    fake_http.respond("POST", PATH, FakeResponse(status=401, json_body=error_payload("bad key")))

    assert [_reason(config) for _ in range(5)] == ["provider_error"] * 5

    fake_http.respond("POST", PATH, HEALTHY)
    other_tenant = EmbeddingConfig(
        provider="openai", model="m", base_url=fake_http.url("/v1"), api_key="sk-valid"
    )
    assert len(embed_texts(other_tenant, ["a"])) == 1
    assert len(fake_http.requests) == 6


def test_a_dimension_mismatch_does_not_trip_the_breaker(
    fake_http: FakeHttpServer, clock: Clock, breaker_settings
):
    config = _config(fake_http)
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([[1.0] * 768]))

    assert [_reason(config) for _ in range(4)] == ["dimension_mismatch"] * 4
    assert len(fake_http.requests) == 4


def test_breakers_are_per_endpoint(fake_http: FakeHttpServer, clock: Clock, breaker_settings):
    config = _config(fake_http)
    _open_the_circuit(fake_http, config)
    fake_http.respond("POST", PATH, HEALTHY)
    other_model = EmbeddingConfig(
        provider="openai", model="other", base_url=fake_http.url("/v1"), api_key="sk"
    )

    assert len(embed_texts(other_model, ["a"])) == 1
    assert _reason(config) == "circuit_open"


def _calls(server: RedisServer) -> int:
    client = redis.Redis(port=server.port)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    # The counting client's own handshake and INFO are not the service's.
    ours = {"cmdstat_info", "cmdstat_hello"}
    return sum(int(stat["calls"]) for name, stat in stats.items() if name not in ours)


def test_the_local_model_embeds_without_a_shared_cache_round_trip(settings, monkeypatch):
    local, remote = EmbeddingConfig(provider="local"), EmbeddingConfig(provider="fake")
    with redis_as_the_shared_cache(settings, monkeypatch) as server:
        embed_query(local, "the model loads before the count starts")
        before = _calls(server)
        embed_query(local, "Where does Maria work?")
        embed_texts(local, ["Maria works at Globex.", "Maria moved to Lisbon."])
        local_calls = _calls(server) - before

        embed_query(remote, "Where does Maria work?")
        remote_calls = _calls(server) - before - local_calls

    assert local_calls == 0
    assert remote_calls == 1  # the breaker's state, read in one MGET
