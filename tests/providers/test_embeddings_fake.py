from __future__ import annotations

import hashlib

import numpy as np
import pytest

from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_query,
    embed_texts,
    embedding_content_hash,
    normalise_text,
    probe_embedding_provider,
)

FAKE = EmbeddingConfig(provider="fake")


def test_identical_texts_give_identical_unit_vectors():
    first, second = embed_texts(FAKE, ["Ship it on Friday", "Ship it on Friday"])

    assert first == second
    assert len(first) == 384
    assert float(np.linalg.norm(first)) == pytest.approx(1.0, abs=1e-9)


def test_vectors_do_not_depend_on_the_process_hash_seed():
    # Pinned buckets: Python's salted hash() would move these between processes.
    vector = embed_query(FAKE, "alpha")

    assert [index for index, value in enumerate(vector) if value != 0.0] == [
        38,
        150,
        163,
        216,
        217,
        283,
    ]


def test_case_and_punctuation_do_not_matter_but_words_do():
    plain, shouted, other = embed_texts(FAKE, ["dark mode please", "DARK mode, please!", "light"])

    assert plain == shouted
    assert plain != other


def test_texts_sharing_words_are_more_similar():
    query, overlapping, unrelated = np.array(
        embed_texts(
            FAKE,
            [
                "the user prefers dark mode",
                "dark mode is what the user prefers in the editor",
                "quarterly tax filing is due in April",
            ],
        )
    )

    assert float(query @ overlapping) > 0.6
    assert float(query @ unrelated) < 0.2


def test_empty_text_still_has_a_direction():
    (vector,) = embed_texts(FAKE, ["  ...  "])

    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-9)


def test_fail_marker_fails_the_call_as_a_provider_error():
    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(FAKE, ["fine", "this one [[embed-fail]] breaks"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The fake embedding provider failed (FakeProviderError)."
    assert len(embed_texts(FAKE, ["fine"])) == 1


def test_fail_marker_trips_the_breaker_like_a_real_outage(settings):
    settings.PROVIDER_BREAKER_FAILURE_THRESHOLD = 2
    for _ in range(2):
        with pytest.raises(EmbeddingsUnavailable):
            embed_query(FAKE, "[[embed-fail]]")

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_query(FAKE, "a healthy text")

    assert excinfo.value.reason == "circuit_open"


def test_fake_with_other_dimensions_is_refused_by_the_probe():
    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        probe_embedding_provider(EmbeddingConfig(provider="fake", dimensions=512))

    assert excinfo.value.reason == "dimension_mismatch"


def test_probe_accepts_the_fake():
    probe_embedding_provider(FAKE)  # raises on failure


def test_follows_the_deployment_dimension(settings):
    settings.EMBEDDING_DIMENSIONS = 16

    (vector,) = embed_texts(FAKE, ["sixteen buckets"])

    assert len(vector) == 16


def test_unknown_provider_is_unavailable():
    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(EmbeddingConfig(provider="word2vec"), ["a"])

    assert excinfo.value.reason == "unknown_provider"
    assert excinfo.value.message == (
        "Unknown embedding provider 'word2vec'; choose one of ['fake', 'local', 'openai']."
    )


def test_no_texts_means_no_call_and_no_vectors():
    assert embed_texts(EmbeddingConfig(provider="word2vec"), []) == []


def test_a_bare_string_is_a_programming_error():
    with pytest.raises(TypeError):
        embed_texts(FAKE, "not a list")


@pytest.mark.parametrize(
    ("_case", "text", "expected"),
    [
        ("strips", "  hello  ", "hello"),
        ("collapses_runs", "a \t\n  b\r\nc", "a b c"),
        ("keeps_case", "Dark Mode", "Dark Mode"),
        ("unicode_space", "a\u00a0\u2003b", "a b"),
        ("empty", " \n ", ""),
    ],
)
def test_normalise_text(_case, text, expected):
    assert normalise_text(text) == expected


def test_content_hash_is_sha256_of_the_normalised_text():
    assert embedding_content_hash("  Dark   mode\n") == hashlib.sha256(b"Dark mode").hexdigest()
    assert embedding_content_hash("Dark mode") == embedding_content_hash(" Dark\tmode ")
    assert embedding_content_hash("Dark mode") != embedding_content_hash("dark mode")
