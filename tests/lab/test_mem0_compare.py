"""mem0_compare's own arithmetic: figures, medians, the ratio and lead, the order of a round,
reading both systems' answers, and the refusal without mem0. mem0 itself is not tested."""

from __future__ import annotations

import builtins

import pytest
from django.core.management import call_command

from apps.core.management.base import CommandFailed, error_document
from lab import mem0_compare as compare
from lab.locomo.dataset import QuestionResult


def _result(evidence, retrieved, latency_ms, category=4):
    return QuestionResult(
        sample_id="conv-x",
        category=category,
        evidence=tuple(evidence),
        retrieved=tuple(retrieved),
        latency_ms=latency_ms,
    )


def _figures(r5, r10, p50, p95=0.0):
    return compare.SystemFigures(questions=2, recall={5: r5, 10: r10}, p50_ms=p50, p95_ms=p95)


def test_system_figures_score_recall_at_k_as_recall_eval_does():
    results = [
        # Both evidence turns, one in the top 5 and one at rank 7: R@5 1/2, R@10 1.
        _result(["D1:1", "D1:2"], ["D1:1", "x", "x", "x", "x", "x", "D1:2"], 10.0),
        # Its evidence nowhere: 0 at every k.
        _result(["D2:1"], ["x"] * 10, 30.0),
        # At rank 1: 1 at every k.
        _result(["D3:1"], ["D3:1"], 20.0, category=1),
    ]

    figures = compare.system_figures(results)

    assert figures.questions == 3
    assert figures.recall[5] == pytest.approx((0.5 + 0 + 1) / 3)
    assert figures.recall[10] == pytest.approx((1 + 0 + 1) / 3)
    # Nearest-rank percentiles of 10, 20, 30.
    assert figures.p50_ms == 20.0
    assert figures.p95_ms == 30.0
    assert figures.mean_returned == pytest.approx((7 + 10 + 1) / 3)


def test_medians_are_taken_figure_by_figure():
    rounds = [
        _figures(0.1, 0.5, 30.0, 90.0),
        _figures(0.3, 0.4, 10.0, 70.0),
        _figures(0.2, 0.6, 20.0, 80.0),
    ]

    median = compare.median_figures(rounds)

    assert median.recall == {5: 0.2, 10: 0.5}
    assert (median.p50_ms, median.p95_ms) == (20.0, 80.0)
    with pytest.raises(ValueError, match="no rounds"):
        compare.median_figures([])


def test_the_ratio_is_mem0_over_engram_and_the_lead_engram_minus_mem0():
    comparison = compare.Comparison(engram=_figures(0.7, 0.8, 8.0), mem0=_figures(0.4, 0.5, 40.0))

    assert comparison.p50_ratio == pytest.approx(5.0)
    assert comparison.recall_lead(10) == pytest.approx(0.3)
    data = comparison.as_dict()
    assert data["p50_ratio_mem0_over_engram"] == 5.0
    assert data["recall_lead_engram_minus_mem0"] == {"R@5": 0.3, "R@10": 0.3}
    assert data["engram"]["recall"] == {"R@5": 0.7, "R@10": 0.8}
    assert data["mem0"]["latency_ms"]["p50"] == 40.0
    # A slower Engram gives a ratio below 1 and mem0 ahead gives a negative lead.
    behind = compare.Comparison(engram=_figures(0.4, 0.4, 40.0), mem0=_figures(0.5, 0.6, 8.0))
    assert behind.p50_ratio == pytest.approx(0.2)
    assert behind.recall_lead(10) == pytest.approx(-0.2)
    assert (
        compare.Comparison(engram=_figures(0, 0, 0.0), mem0=_figures(0, 0, 1.0)).p50_ratio is None
    )


def test_the_system_asked_first_alternates_by_round():
    assert [compare.alternating_order(i) for i in range(3)] == [
        ("engram", "mem0"),
        ("mem0", "engram"),
        ("engram", "mem0"),
    ]


def test_both_answers_are_read_as_dia_ids_in_rank_order():
    engram_body = {
        "data": [
            {"memory": {"metadata": {"dia_id": "D2:3"}}},
            {"memory": {"metadata": None}},
            {"memory": {"metadata": {"dia_id": "D1:1"}}},
        ]
    }
    mem0_answer = {"results": [{"metadata": {"dia_id": "D5:1"}}, {"memory": "no metadata"}]}

    assert compare.engram_retrieved(engram_body) == ("D2:3", "", "D1:1")
    assert compare.mem0_retrieved(mem0_answer) == ("D5:1", "")


def test_mem0_config_points_the_llm_and_embedder_nowhere_and_keeps_the_vectors_in_pgvector(
    tmp_path,
):
    config = compare.mem0_config(
        conninfo="dbname=engram",
        collection="c1",
        history_path=str(tmp_path / "h.db"),
        hnsw=False,
    )

    assert config["vector_store"]["provider"] == "pgvector"
    assert config["vector_store"]["config"]["embedding_model_dims"] == 384
    assert config["vector_store"]["config"]["hnsw"] is False
    assert config["llm"]["config"]["openai_base_url"].startswith("http://127.0.0.1:")
    assert config["embedder"]["config"]["openai_base_url"].startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError, match="infer=False"):
        compare._NoLLM().generate_response(messages=[])


@pytest.fixture
def without_mem0(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "mem0" or name.startswith("mem0."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


@pytest.mark.django_db
def test_without_mem0_the_command_says_to_run_make_compare_venv(without_mem0, tmp_path):
    dataset = tmp_path / "locomo.json"
    dataset.write_text("[]")
    with pytest.raises(compare.Mem0Unavailable, match="make compare-venv"):
        compare.load_mem0()

    with pytest.raises(CommandFailed) as raised:
        call_command("mem0_compare", "--path", str(dataset), "--conversations", "", "--json")

    # run_from_argv prints it as the JSON error document and exits with this status.
    assert raised.value.returncode == 1
    assert raised.value.code == "mem0_not_installed"
    assert "make compare-venv" in raised.value.message
    assert "error" in error_document(raised.value)
