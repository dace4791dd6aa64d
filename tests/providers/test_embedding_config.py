from __future__ import annotations

import pytest

from apps.providers.embeddings import EmbeddingConfig


def test_from_parts_reads_model_base_url_and_dimensions():
    config = EmbeddingConfig.from_parts(
        provider="openai",
        config={
            "model": " embed-small ",
            "base_url": "http://ollama:11434/v1",
            "dimensions": "384",
        },
        api_key="sk-secret",
    )

    assert config == EmbeddingConfig(
        provider="openai",
        model="embed-small",
        base_url="http://ollama:11434/v1",
        api_key="sk-secret",
        dimensions=384,
    )


def test_from_parts_ignores_unknown_keys_and_blank_dimensions():
    config = EmbeddingConfig.from_parts(
        provider="local", config={"dimensions": "", "api_key": "stray", "colour": "blue"}
    )

    assert config == EmbeddingConfig(provider="local")


@pytest.mark.parametrize(
    ("_case", "dimensions"),
    [("zero", 0), ("negative", -3), ("text", "big"), ("fraction", 3.5), ("boolean", True)],
)
def test_from_parts_rejects_bad_dimensions(_case, dimensions):
    with pytest.raises(ValueError, match="dimensions must be a positive integer"):
        EmbeddingConfig.from_parts(provider="openai", config={"dimensions": dimensions})


def test_default_comes_from_settings(settings):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_MODEL = "embed-large"
    settings.EMBEDDING_BASE_URL = "http://tei:8080/v1"
    settings.EMBEDDING_API_KEY = "sk-deploy"

    assert EmbeddingConfig.default() == EmbeddingConfig(
        provider="openai", model="embed-large", base_url="http://tei:8080/v1", api_key="sk-deploy"
    )


def test_the_key_never_appears_in_repr_or_breaker_key():
    config = EmbeddingConfig(provider="openai", model="m", api_key="sk-very-secret")

    assert "sk-very-secret" not in repr(config)
    assert "sk-very-secret" not in config.breaker_key
    assert "sk-very-secret" not in config.endpoint_key


@pytest.mark.parametrize(
    ("_case", "config", "expected"),
    [
        (
            "openai_default_url",
            EmbeddingConfig(provider="openai", model="m"),
            "openai|https://api.openai.com/v1|m",
        ),
        (
            "trailing_slash",
            EmbeddingConfig(provider="openai", model="m", base_url="http://h:1/v1/"),
            "openai|http://h:1/v1|m",
        ),
        ("local", EmbeddingConfig(provider="local"), "local||all-MiniLM-L6-v2-onnx-int8"),
        ("fake", EmbeddingConfig(provider="fake"), "fake||"),
        (
            "openai_default_model",
            EmbeddingConfig(provider="openai", base_url="http://h:1/v1"),
            "openai|http://h:1/v1|text-embedding-3-small",
        ),
    ],
)
def test_endpoint_key_identifies_the_endpoint(_case, config, expected):
    assert config.endpoint_key == expected
    assert config.breaker_key.startswith(f"{expected}|")


@pytest.mark.parametrize(
    ("_case", "other"),
    [
        ("another_key", EmbeddingConfig(provider="openai", model="m", api_key="sk-b")),
        ("another_owner", EmbeddingConfig(provider="openai", model="m", api_key="sk-a", owner="t")),
        (
            "other_dimensions",
            EmbeddingConfig(provider="openai", model="m", api_key="sk-a", dimensions=256),
        ),
        ("another_model", EmbeddingConfig(provider="openai", model="n", api_key="sk-a")),
    ],
)
def test_each_provider_configuration_has_its_own_breaker(_case, other):
    first = EmbeddingConfig(provider="openai", model="m", api_key="sk-a")

    assert first.breaker_key != other.breaker_key
    assert (
        first.breaker_key
        == EmbeddingConfig(provider="openai", model="m", api_key="sk-a").breaker_key
    )
