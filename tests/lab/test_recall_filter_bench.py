from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_json_output_reports_every_filter_against_the_reference():
    out = io.StringIO()

    call_command(
        "recall_filter_bench",
        "--rows",
        "60",
        "--wanted-every",
        "20",
        "--runs",
        "1",
        "--in-place",
        "--json",
        stdout=out,
    )

    result = json.loads(out.getvalue())
    figures = {entry["name"]: entry for entry in result["filters"]}
    assert (result["rows_per_subject"], result["wanted_every"], result["runs"]) == (60, 20, 1)
    assert list(figures) == ["none", "tag", "metadata_equal", "number_range", "date_range"]
    assert {name: entry["matching_rows"] for name, entry in figures.items()} == {
        "none": 60,
        "tag": 3,
        "metadata_equal": 3,
        "number_range": 10,
        "date_range": 10,
    }
    assert sorted(figures["tag"]["recall_ms"]) == ["hybrid", "keyword", "semantic"]
    assert all(entry["plan_buffers"] > 0 for entry in figures.values())


def test_a_run_below_one_is_refused():
    with pytest.raises(Exception, match="at least 1"):
        call_command("recall_filter_bench", "--runs", "0", "--in-place")
