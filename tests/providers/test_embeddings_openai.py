from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_texts,
    probe_embedding_provider,
)
from tests.providers.fake_http import (
    FakeHttpServer,
    FakeResponse,
    error_payload,
    openai_embeddings_payload,
)

PATH = "/v1/embeddings"


def _config(server: FakeHttpServer, **overrides: Any) -> EmbeddingConfig:
    config = EmbeddingConfig(
        provider="openai", model="embed-small", base_url=server.url("/v1"), api_key="sk-test-123"
    )
    return dataclasses.replace(config, **overrides)


def _non_numeric_payload() -> Any:
    payload = openai_embeddings_payload([[0.0] * 384])
    payload["data"][0]["embedding"] = ["x"] * 384
    return payload


def _basis(index: int, scale: float = 1.0) -> list[float]:
    vector = [0.0] * 384
    vector[index] = scale
    return vector


def test_request_carries_model_input_dimensions_format_and_key(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([_basis(0), _basis(1)]))

    embed_texts(_config(fake_http), ["first text", "second text"])

    (request,) = fake_http.requests
    assert request.path == PATH
    assert request.headers["authorization"] == "Bearer sk-test-123"
    assert request.body == {
        "model": "embed-small",
        "input": ["first text", "second text"],
        "dimensions": 384,
        "encoding_format": "float",
    }


def test_response_is_parsed_in_index_order_and_normalised(fake_http: FakeHttpServer):
    first = _basis(0, 3.0)
    first[1] = 4.0
    payload = openai_embeddings_payload([first, _basis(2, 0.5)])
    payload["data"].reverse()  # some compatible servers answer out of order
    fake_http.respond_json("POST", PATH, payload)

    vectors = embed_texts(_config(fake_http), ["a", "b"])

    assert vectors[0][:3] == pytest.approx([0.6, 0.8, 0.0])
    assert vectors[1][:3] == pytest.approx([0.0, 0.0, 1.0])
    assert sum(vectors[0][3:]) == 0.0


def test_default_model_and_explicit_dimensions(fake_http: FakeHttpServer, settings):
    settings.EMBEDDING_DIMENSIONS = 8
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([[1.0] * 8]))

    embed_texts(_config(fake_http, model="", dimensions=8), ["a"])

    assert fake_http.requests[0].body["model"] == "text-embedding-3-small"
    assert fake_http.requests[0].body["dimensions"] == 8


def test_output_of_another_length_is_a_dimension_mismatch(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([[1.0] * 768]))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "dimension_mismatch"
    assert "768" in excinfo.value.message


def test_configured_dimensions_other_than_the_deployment_are_refused_without_a_call(
    fake_http: FakeHttpServer,
):
    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http, dimensions=512), ["a"])

    assert excinfo.value.reason == "dimension_mismatch"
    assert fake_http.requests == []


def test_server_error_is_a_provider_error(fake_http: FakeHttpServer):
    fake_http.respond("POST", PATH, FakeResponse(status=500, json_body=error_payload()))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The openai embedding provider failed (InternalServerError)."
    assert len(fake_http.requests) == 1  # max_retries=0: the SDK does not retry behind us


@pytest.mark.parametrize(
    ("_case", "response"),
    [
        ("malformed_json", FakeResponse(raw_body=b"{not json")),
        ("wrong_shape", FakeResponse(json_body={"data": "nope"})),
        ("non_numeric", FakeResponse(json_body=_non_numeric_payload())),
    ],
)
def test_garbage_responses_are_provider_errors(_case, response, fake_http: FakeHttpServer):
    fake_http.respond("POST", PATH, response)

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "provider_error"


def test_fewer_vectors_than_texts_is_a_provider_error(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([_basis(0)]))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a", "b"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The openai embedding provider returned 1 vectors for 2 texts."


def test_a_zero_vector_is_a_provider_error(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([[0.0] * 384]))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "provider_error"


def test_timeout_is_a_provider_error(fake_http: FakeHttpServer, settings):
    settings.PROVIDER_HTTP_TIMEOUT_SECONDS = 0.2
    fake_http.respond(
        "POST",
        PATH,
        FakeResponse(json_body=openai_embeddings_payload([_basis(0)]), delay_seconds=1.0),
    )

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The openai embedding provider failed (APITimeoutError)."


def test_unauthorised_is_a_provider_error_naming_the_status(fake_http: FakeHttpServer):
    fake_http.respond("POST", PATH, FakeResponse(status=401, json_body=error_payload("bad key")))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(_config(fake_http), ["a"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == (
        "The openai embedding provider refused the request: AuthenticationError (HTTP 401)."
    )


def test_missing_key_without_base_url_is_refused_before_any_call():
    config = EmbeddingConfig(provider="openai", model="embed-small")

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(config, ["a"])

    assert excinfo.value.reason == "missing_api_key"


def test_keyless_local_server_never_borrows_the_operators_env_key(
    fake_http: FakeHttpServer, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-secret")
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([_basis(0)]))

    embed_texts(_config(fake_http, api_key=""), ["a"])

    assert fake_http.requests[0].headers["authorization"] == "Bearer sk-no-key-required"


def test_probe_accepts_a_fitting_provider(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([_basis(0)]))

    probe_embedding_provider(_config(fake_http))

    (request,) = fake_http.requests
    assert request.body["input"] == ["Engram is checking that this embedding provider answers."]


def test_probe_refuses_a_provider_of_another_dimension(fake_http: FakeHttpServer):
    fake_http.respond_json("POST", PATH, openai_embeddings_payload([[1.0] * 1536]))

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        probe_embedding_provider(_config(fake_http))

    assert excinfo.value.reason == "dimension_mismatch"
    assert excinfo.value.message == (
        "The openai embedding provider returns 1536-dimensional vectors; this deployment "
        "stores 384 (EMBEDDING_DIMENSIONS)."
    )


def test_probe_reports_an_unreachable_endpoint(fake_http: FakeHttpServer):
    config = _config(fake_http)
    fake_http.stop()

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        probe_embedding_provider(config)

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The openai embedding provider failed (APIConnectionError)."
