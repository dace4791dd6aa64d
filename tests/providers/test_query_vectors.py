"""Query vectors: one embedding per (caller, provider, text), kept per process, never shared
between callers; started on the query pool so the keyword leg runs meanwhile."""

from __future__ import annotations

import numpy as np
import pytest

from apps.providers import query_vectors
from apps.providers.embeddings import EmbeddingConfig, EmbeddingsUnavailable
from tests.providers.fake_http import (
    FakeHttpServer,
    FakeResponse,
    error_payload,
    openai_embeddings_payload,
)

PATH = "/v1/embeddings"
VECTOR = [float(index % 7) - 3.0 for index in range(384)]


@pytest.fixture(autouse=True)
def _empty_cache():
    query_vectors.clear_query_vectors()
    yield
    query_vectors.clear_query_vectors()


@pytest.fixture
def provider(fake_http: FakeHttpServer) -> FakeHttpServer:
    fake_http.respond("POST", PATH, FakeResponse(json_body=openai_embeddings_payload([VECTOR])))
    return fake_http


def _config(server: FakeHttpServer, **changes: str) -> EmbeddingConfig:
    parts = {"model": "m", "api_key": "sk", **changes}
    return EmbeddingConfig(provider="openai", base_url=server.url("/v1"), **parts)


def _calls(server: FakeHttpServer) -> int:
    return len(server.requests_to(PATH))


def test_the_same_callers_query_is_embedded_once(provider):
    config = _config(provider)

    first = query_vectors.embed_query_cached(config, "where is staging?", caller="t1|a")
    again = query_vectors.embed_query_cached(config, "where is staging?", caller="t1|a")

    assert _calls(provider) == 1
    assert again == first
    unit = np.asarray(VECTOR) / np.linalg.norm(VECTOR)
    assert first == pytest.approx(unit.tolist(), abs=1e-6)


def test_another_caller_never_gets_a_kept_vector(provider):
    config = _config(provider)
    query_vectors.embed_query_cached(config, "where is staging?", caller="t1|a")

    query_vectors.embed_query_cached(config, "where is staging?", caller="t1|b")
    query_vectors.embed_query_cached(config, "where is staging?", caller="t2|a")

    assert _calls(provider) == 3


def test_another_text_or_provider_configuration_is_embedded_anew(provider):
    query_vectors.embed_query_cached(_config(provider), "where is staging?", caller="t1|a")

    query_vectors.embed_query_cached(_config(provider), "Where is staging?", caller="t1|a")
    query_vectors.embed_query_cached(
        _config(provider, model="other"), "where is staging?", caller="t1|a"
    )
    query_vectors.embed_query_cached(
        _config(provider, api_key="sk-rotated"), "where is staging?", caller="t1|a"
    )

    assert _calls(provider) == 4


def test_a_failed_embedding_is_not_kept(fake_http):
    fake_http.respond(
        "POST",
        PATH,
        FakeResponse(status=400, json_body=error_payload()),
        FakeResponse(json_body=openai_embeddings_payload([VECTOR])),
    )
    config = _config(fake_http)

    with pytest.raises(EmbeddingsUnavailable):
        query_vectors.embed_query_cached(config, "q", caller="t1|a")
    query_vectors.embed_query_cached(config, "q", caller="t1|a")
    query_vectors.embed_query_cached(config, "q", caller="t1|a")

    assert _calls(fake_http) == 2


def test_the_cache_is_bounded_least_recently_used_first(provider, settings):
    settings.EMBEDDING_QUERY_CACHE_SIZE = 2
    config = _config(provider)
    for text in ("one", "two", "one", "three"):  # "two" is the least recently used
        query_vectors.embed_query_cached(config, text, caller="t1|a")
    assert _calls(provider) == 3

    query_vectors.embed_query_cached(config, "one", caller="t1|a")
    assert _calls(provider) == 3
    query_vectors.embed_query_cached(config, "two", caller="t1|a")
    assert _calls(provider) == 4


def test_size_zero_keeps_nothing(provider, settings):
    settings.EMBEDDING_QUERY_CACHE_SIZE = 0
    config = _config(provider)

    for _ in range(3):
        query_vectors.embed_query_cached(config, "q", caller="t1|a")

    assert _calls(provider) == 3
    assert query_vectors.cached_query_vector(config, "q", caller="t1|a") is None


def test_soon_embeds_on_the_pool_and_a_kept_vector_is_already_done(provider):
    config = _config(provider)

    pending = query_vectors.embed_query_soon(config, "q", caller="t1|a")
    vector = pending.result(timeout=10)
    kept = query_vectors.embed_query_soon(config, "q", caller="t1|a")

    assert kept.done()
    assert kept.result() == vector
    assert _calls(provider) == 1


def test_soon_hands_a_provider_failure_to_the_waiter(fake_http):
    fake_http.respond("POST", PATH, FakeResponse(status=400, json_body=error_payload()))

    pending = query_vectors.embed_query_soon(_config(fake_http), "q", caller="t1|a")

    with pytest.raises(EmbeddingsUnavailable):
        pending.result(timeout=10)
