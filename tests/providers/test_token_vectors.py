"""Token vectors for late interaction: the local model's query tokens in context and its
input embedding table for documents."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from apps.providers import token_vectors
from apps.providers.embedders import local_onnx
from apps.providers.embeddings import EmbeddingConfig, embed_search_query


@pytest.fixture(autouse=True)
def _local_minilm(settings):
    settings.EMBEDDING_PROVIDER = "local"
    settings.LOCAL_EMBEDDING_MODEL = "minilm"


@pytest.mark.parametrize(
    ("_case", "provider", "model", "expected"),
    [
        ("local_minilm", "local", "minilm", True),
        ("local_bge_has_no_known_table", "local", "bge-small", False),
        ("remote_provider", "openai", "minilm", False),
        ("fake_provider", "fake", "minilm", False),
    ],
)
def test_late_interaction_needs_a_local_model_with_a_known_table(
    settings, _case, provider, model, expected
):
    settings.EMBEDDING_PROVIDER = provider
    settings.LOCAL_EMBEDDING_MODEL = model

    assert token_vectors.late_interaction_available() is expected


def test_query_tokens_are_unit_rows_one_per_token_without_specials():
    query = "When did Melanie paint a sunrise?"
    tokens = local_onnx.load_model().tokenizer.encode(query)

    vectors = token_vectors.query_token_vectors(query)

    assert vectors.shape == (len(tokens.ids) - 2, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0] * len(vectors), abs=1e-5)


def test_a_query_token_vector_is_kept_for_the_same_text():
    first = token_vectors.query_token_vectors("where is the lake")

    assert token_vectors.query_token_vectors("where is the lake") is first


def test_document_tokens_are_the_table_rows_of_each_text():
    texts = ["painting a sunrise", ""]
    tokens = local_onnx.load_model().tokenizer.encode(texts[0])

    documents = token_vectors.document_token_vectors(texts)

    assert documents.lengths == (len(tokens.ids) - 2, 0)
    assert documents.vectors.shape == (len(tokens.ids) - 2, 384)
    assert np.linalg.norm(documents.vectors, axis=1) == pytest.approx(
        [1.0] * len(documents.vectors), abs=1e-2
    )


def test_max_sim_prefers_the_document_that_shares_the_query_tokens():
    query = token_vectors.query_token_vectors("Which lake did she paint at sunrise?")
    documents = token_vectors.document_token_vectors(
        ["I painted the lake at sunrise", "The quarterly tax filing is due in April"]
    )
    matching = token_vectors.document_token_vectors(["I painted the lake at sunrise"]).vectors

    first, second = token_vectors.max_sims(query, documents)
    assert first > second
    assert first == pytest.approx(float((query @ matching.T).max(axis=1).mean()), abs=1e-5)


def test_max_sim_of_an_empty_side_is_zero():
    query = token_vectors.query_token_vectors("lake")
    documents = token_vectors.document_token_vectors(["", "the lake", ""])
    lake = token_vectors.document_token_vectors(["the lake"]).vectors

    direct = float((query @ lake.T).max(axis=1).mean())
    assert token_vectors.max_sims(query, documents) == [
        0.0,
        pytest.approx(direct, abs=1e-5),
        0.0,
    ]
    assert token_vectors.max_sims(query[:0], documents) == [0.0, 0.0, 0.0]
    assert token_vectors.max_sims(query, token_vectors.document_token_vectors([""])) == [0.0]


def test_the_query_tokens_come_from_the_pass_that_embedded_the_query(monkeypatch):
    query = "What did the lake look like at sunrise?"
    vector = embed_search_query(EmbeddingConfig(provider="local"), query)
    second_pass = []
    monkeypatch.setattr(
        local_onnx.LoadedModel, "token_states", lambda *args: second_pass.append(args)
    )

    tokens = token_vectors.query_token_vectors(query)

    assert second_pass == []
    assert tokens.shape[1] == 384
    # The kept states pool to the very vector the query got.
    kept = local_onnx.recent_query_states(query)
    assert kept is not None
    states, encoding = kept
    pooled = states.mean(axis=0)
    assert vector == pytest.approx((pooled / np.linalg.norm(pooled)).tolist(), abs=1e-6)
    assert len(encoding.ids) == len(states)


def test_the_product_runs_on_one_blas_thread():
    query = token_vectors.query_token_vectors("lake")
    token_vectors.max_sims(query, token_vectors.document_token_vectors(["the lake"]))

    blas = [info for info in threadpool_info() if info["user_api"] == "blas"]
    assert blas
    assert {info["num_threads"] for info in blas} == {1}
