from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

import numpy as np
import pytest
from celery.signals import worker_process_init

from apps.providers.embedders import local_onnx
from apps.providers.embeddings import (
    EmbeddingConfig,
    EmbeddingsUnavailable,
    embed_query,
    embed_search_query,
    embed_texts,
)

LOCAL = EmbeddingConfig(provider="local")


@pytest.fixture(autouse=True)
def _minilm(settings):
    """These tests hold all-MiniLM-L6-v2 (``test_embeddings_local_bge.py`` holds bge-small)."""
    settings.LOCAL_EMBEDDING_MODEL = "minilm"


def _replace_minilm(monkeypatch: pytest.MonkeyPatch, **changes: object) -> None:
    monkeypatch.setitem(
        local_onnx.LOCAL_MODELS, "minilm", dataclasses.replace(local_onnx.MINILM, **changes)
    )


def test_vectors_have_the_pinned_dimension_and_unit_length():
    vectors = embed_texts(LOCAL, ["The user prefers dark mode in the editor", ""])

    assert [len(vector) for vector in vectors] == [384, 384]
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-6)


def test_identical_texts_give_identical_vectors():
    first, second = embed_texts(LOCAL, ["Ship the release on Friday", "Ship the release on Friday"])

    assert first == second
    assert embed_query(LOCAL, "Ship the release on Friday") == pytest.approx(first, abs=1e-6)


def test_a_paraphrase_ranks_above_an_unrelated_sentence():
    query, paraphrase, unrelated = np.array(
        embed_texts(
            LOCAL,
            [
                "The user prefers dark mode in the editor",
                "Dark theme is what the user likes for their IDE",
                "The quarterly tax filing is due in April",
            ],
        )
    )

    paraphrase_similarity = float(query @ paraphrase)
    unrelated_similarity = float(query @ unrelated)

    assert paraphrase_similarity > 0.45
    assert unrelated_similarity < 0.15
    assert paraphrase_similarity - unrelated_similarity > 0.3


def _first_uses_at_once(
    load: Callable[[], local_onnx.LoadedModel], callers: int
) -> list[local_onnx.LoadedModel]:
    """``load`` called by ``callers`` threads released together; what each got."""
    start = threading.Barrier(callers)
    models: list[local_onnx.LoadedModel] = []

    def first_use() -> None:
        start.wait()
        models.append(load())

    threads = [threading.Thread(target=first_use) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return models


SEARCHES = [
    "When did Caroline go to the LGBTQ support group?",
    "What does the user like for their editor",
    "deploy pipeline friday",
    "Where did we go hiking last summer, and who brought the tent?",
    "What is the name of Melanie's dog?",
]


def test_search_queries_run_on_the_int8_model_within_a_small_angle_of_the_exact_one():
    exact = np.array(embed_texts(LOCAL, SEARCHES))
    searched = np.array([embed_search_query(LOCAL, text) for text in SEARCHES])

    cosines = (exact * searched).sum(axis=1)
    assert np.linalg.norm(searched, axis=1) == pytest.approx([1.0] * len(SEARCHES), abs=1e-6)
    # Another model answered (the vectors differ), and it is the same encoder within ~0.01.
    assert cosines.max() < 0.99999
    assert cosines.min() > 0.98
    # Each query is still nearest to its own exact vector.
    assert list((searched @ exact.T).argmax(axis=1)) == list(range(len(SEARCHES)))


def test_search_queries_rank_a_paraphrase_above_an_unrelated_sentence():
    paraphrase, unrelated = np.array(
        embed_texts(
            LOCAL,
            [
                "Dark theme is what the user likes for their IDE",
                "The quarterly tax filing is due in April",
            ],
        )
    )
    query = np.array(embed_search_query(LOCAL, "The user prefers dark mode in the editor"))

    assert float(query @ paraphrase) > 0.45
    assert float(query @ unrelated) < 0.15


def test_search_queries_use_the_exact_model_when_int8_queries_are_off(settings):
    settings.LOCAL_EMBEDDING_QUERY_INT8 = False

    assert embed_search_query(LOCAL, SEARCHES[0]) == embed_query(LOCAL, SEARCHES[0])


def test_the_query_model_is_derived_once_under_concurrent_first_use(monkeypatch):
    monkeypatch.setattr(local_onnx, "_query_models", {})
    derivations = 0
    real_derive = local_onnx._dynamic_int8_session

    def counting_derive(model_path):
        nonlocal derivations
        derivations += 1
        return real_derive(model_path)

    monkeypatch.setattr(local_onnx, "_dynamic_int8_session", counting_derive)

    models = _first_uses_at_once(local_onnx.load_query_model, 3)

    assert derivations == 1
    assert len(models) == 3
    assert all(model is models[0] for model in models)
    assert models[0] is not local_onnx.load_model()
    assert local_onnx.load_query_model() is models[0]


def test_batch_order_is_preserved_across_mixed_lengths():
    # 40 texts (two inference batches) whose lengths are deliberately not sorted.
    words = "agents remember facts about users and recall them when a later session needs them"
    vocabulary = words.split() * 20
    texts = [
        f"note {index}: " + " ".join(vocabulary[index % 7 : index % 7 + 3 + (index * 11) % 60])
        for index in range(40)
    ]

    batched = np.array(embed_texts(LOCAL, texts))
    one_by_one = np.array([embed_query(LOCAL, text) for text in texts])

    assert np.abs(batched - one_by_one).max() < 1e-5
    assert list((batched @ one_by_one.T).argmax(axis=1)) == list(range(40))


def test_text_beyond_256_tokens_is_truncated():
    long_text = " ".join(["alpha beta gamma delta"] * 100)

    truncated = embed_query(LOCAL, long_text)
    with_different_tail = embed_query(LOCAL, long_text + " and then the quarterly tax filing")

    assert truncated == with_different_tail


def test_model_loads_once_under_concurrent_first_use(monkeypatch):
    monkeypatch.setattr(local_onnx, "_models", {})
    loads = 0
    real_load = local_onnx._load

    def counting_load(model: local_onnx.LocalModel) -> local_onnx.LoadedModel:
        nonlocal loads
        loads += 1
        return real_load(model)

    monkeypatch.setattr(local_onnx, "_load", counting_load)

    models = _first_uses_at_once(local_onnx.load_model, 4)

    assert loads == 1
    assert len(models) == 4
    assert all(model is models[0] for model in models)


def test_session_uses_the_configured_thread_counts(monkeypatch, settings):
    settings.LOCAL_EMBEDDING_THREADS = 1
    monkeypatch.setattr(local_onnx, "_models", {})

    options = local_onnx.load_model()._session.get_session_options()

    assert options.intra_op_num_threads == 1
    assert options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_refuses_a_model_file_whose_checksum_does_not_match(monkeypatch):
    monkeypatch.setattr(local_onnx, "_models", {})
    _replace_minilm(monkeypatch, model_sha256="0" * 64)

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(LOCAL, ["anything"])

    assert excinfo.value.reason == "provider_error"
    assert "sha256" in excinfo.value.message
    assert local_onnx._models == {}


def test_a_missing_model_file_is_unavailable_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setattr(local_onnx, "_models", {})
    _replace_minilm(monkeypatch, model_path=lambda: tmp_path / "gone.onnx")

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(LOCAL, ["anything"])

    assert excinfo.value.reason == "provider_error"
    assert excinfo.value.message == "The local embedding provider failed (FileNotFoundError)."


def test_deployment_dimension_other_than_the_model_is_a_mismatch(settings):
    settings.EMBEDDING_DIMENSIONS = 768

    with pytest.raises(EmbeddingsUnavailable) as excinfo:
        embed_texts(LOCAL, ["anything"])

    assert excinfo.value.reason == "dimension_mismatch"


@pytest.mark.parametrize(("provider", "loaded"), [("local", True), ("fake", False)])
def test_a_worker_pool_process_loads_the_local_model_when_it_starts(
    monkeypatch, settings, provider, loaded
):
    settings.EMBEDDING_PROVIDER = provider
    monkeypatch.setattr(local_onnx, "_models", {})

    worker_process_init.send(sender=None)

    assert ("minilm" in local_onnx._models) is loaded


def test_a_model_that_fails_to_load_at_worker_start_leaves_the_process_running(
    monkeypatch, settings, tmp_path
):
    settings.EMBEDDING_PROVIDER = "local"
    monkeypatch.setattr(local_onnx, "_models", {})
    _replace_minilm(monkeypatch, model_path=lambda: tmp_path / "gone.onnx")

    worker_process_init.send(sender=None)  # logs, does not raise

    assert local_onnx._models == {}


def test_deriving_the_query_model_logs_one_line_not_the_quantisers_notes(monkeypatch, caplog):
    monkeypatch.setattr(local_onnx, "_query_models", {})

    with caplog.at_level(logging.DEBUG):
        local_onnx.load_query_model()

    assert [record.getMessage()[:26] for record in caplog.records] == ["local query model derived "]
