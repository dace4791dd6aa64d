from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from lab.embedding_bench import synthetic_sentences


def test_json_output_reports_the_measurements(settings):
    out = io.StringIO()

    call_command(
        "embedding_bench", "--texts", "12", "--batch", "5", "--queries", "4", "--json", stdout=out
    )

    result = json.loads(out.getvalue())
    assert sorted(result) == [
        "batch",
        "cpu_ms_per_text",
        "dimensions",
        "load_seconds",
        "model",
        "queries",
        "query_p50_ms",
        "query_p95_ms",
        "search_query_cpu_p50_ms",
        "search_query_p50_ms",
        "texts",
        "texts_per_second",
        "threads",
    ]
    assert result["model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert result["dimensions"] == 384
    assert result["threads"] == settings.LOCAL_EMBEDDING_THREADS
    assert (result["texts"], result["batch"], result["queries"]) == (12, 5, 4)
    assert result["texts_per_second"] > 0
    assert 0 < result["query_p50_ms"] <= result["query_p95_ms"]
    assert result["search_query_p50_ms"] > 0
    assert result["cpu_ms_per_text"] > 0


def test_text_output_names_model_threads_and_figures():
    out = io.StringIO()

    call_command("embedding_bench", "--texts", "4", "--batch", "4", "--queries", "2", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0] == "model        all-MiniLM-L6-v2-onnx-int8 (384 dimensions)"
    assert lines[3].startswith("batched      ")
    assert lines[3].endswith(" ms CPU a text (4 texts, 4 per call)")
    assert lines[4].startswith("single query p50 ")
    assert lines[5].startswith("search query p50 ")


def test_rejects_empty_runs():
    with pytest.raises(CommandError):
        call_command("embedding_bench", "--texts", "0")


def test_synthetic_sentences_are_stable_and_10_to_40_words():
    first = synthetic_sentences(count=200)

    assert first == synthetic_sentences(count=200)
    assert len(set(first)) == 200
    word_counts = [len(sentence.split()) - 2 for sentence in first]  # minus "Note N:"
    assert min(word_counts) == 10
    assert max(word_counts) == 40
