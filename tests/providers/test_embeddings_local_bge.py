"""The local provider on bge-small-en-v1.5 (``LOCAL_EMBEDDING_MODEL=bge-small``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from apps.providers.embedders import local_onnx
from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_query,
    embed_search_query,
    embed_texts,
)

LOCAL = EmbeddingConfig(provider="local")
INSTRUCTION = "Represent this sentence for searching relevant passages: "


@pytest.fixture(autouse=True)
def _bge_small(settings):
    settings.LOCAL_EMBEDDING_MODEL = "bge-small"


def test_the_weights_load_from_their_package_without_importing_it(monkeypatch):
    monkeypatch.setattr(local_onnx, "_models", {})
    monkeypatch.delitem(sys.modules, "compartment", raising=False)

    vectors = embed_texts(LOCAL, ["The user prefers dark mode in the editor", ""])

    model_path = local_onnx.BGE_SMALL.model_path()
    assert model_path.name == "model_quantized.onnx"
    assert Path("site-packages", "compartment") in {
        Path(*model_path.parts[index : index + 2]) for index in range(len(model_path.parts))
    }
    # Found by its location only: the package's own __init__ never ran.
    assert "compartment" not in sys.modules
    assert [len(vector) for vector in vectors] == [384, 384]
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-6)


def test_the_endpoint_names_the_model_so_breakers_and_reembeds_tell_the_models_apart(settings):
    assert LOCAL.endpoint_key == "local||bge-small-en-v1.5-onnx-int8"

    settings.LOCAL_EMBEDDING_MODEL = "minilm"

    assert LOCAL.endpoint_key == "local||all-MiniLM-L6-v2-onnx-int8"


def test_a_search_query_carries_the_models_instruction_and_a_document_does_not():
    question = "When did Caroline go to the LGBTQ support group?"

    searched = embed_search_query(LOCAL, question)

    assert searched == pytest.approx(embed_query(LOCAL, INSTRUCTION + question), abs=1e-6)
    assert float(np.dot(searched, embed_query(LOCAL, question))) < 0.99


def test_documents_are_pooled_from_the_cls_token():
    text = "Caroline went to an LGBTQ support group on Sunday"
    loaded = local_onnx.load_model()
    encoding = loaded.tokenizer.encode(text)
    ids = np.array([encoding.ids], dtype=np.int64)
    (hidden,) = loaded._session.run(
        ["last_hidden_state"],
        {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        },
    )
    cls = hidden[0, 0] / np.linalg.norm(hidden[0, 0])

    assert embed_query(LOCAL, text) == pytest.approx(cls.tolist(), abs=1e-5)


def test_a_question_ranks_its_answer_above_a_neighbour_on_the_same_topic():
    answer, neighbour, unrelated = np.array(
        embed_texts(
            LOCAL,
            [
                "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
                "Melanie: I love going to the park with my kids on Sundays.",
                "The quarterly tax filing is due in April",
            ],
        )
    )
    query = np.array(embed_search_query(LOCAL, "When did Caroline go to the support group?"))

    assert float(query @ answer) - float(query @ neighbour) > 0.1
    assert float(query @ answer) - float(query @ unrelated) > 0.2


def test_text_beyond_512_tokens_is_truncated():
    long_text = " ".join(["alpha beta gamma delta"] * 200)

    assert embed_query(LOCAL, long_text) == embed_query(LOCAL, long_text + " and tax filing")


def test_an_unknown_local_model_is_a_provider_error(settings):
    settings.LOCAL_EMBEDDING_MODEL = "gte-small"

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(LOCAL, ["anything"])

    assert excinfo.value.reason == "provider_error"
    assert "gte-small" in excinfo.value.message


def test_queries_share_the_document_session_which_already_runs_int8_products():
    assert local_onnx.load_query_model() is local_onnx.load_model()
