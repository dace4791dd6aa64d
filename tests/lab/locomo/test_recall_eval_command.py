import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory
from apps.tenancy.models import Tenant

pytestmark = pytest.mark.django_db


def _run(path, *args):
    out = StringIO()
    call_command("recall_eval", "--path", str(path), "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_recall_eval_end_to_end_on_a_tiny_dataset(tiny_locomo):
    tenants_before = Tenant.objects.count()

    # Keyword mode, no context: each question's words match exactly the turns planned.
    data = _run(tiny_locomo, "--mode", "keyword", "--k", "1,2", "--context-turns", "-1")

    assert data["questions"] == 6
    assert data["questions_skipped_no_evidence"] == 2
    assert data["memories"] == 7
    assert data["mode"] == "keyword"
    # conv-x: puppy 1, sister 1/2 (D2:1 not found), aquarium 1, instrument 0, kayak 1;
    # conv-y: puppy Max 1 (conv-x's Rex is another subject and never returned).
    assert data["overall"]["recall"] == {"1": 0.75, "2": 0.75}
    assert data["overall"]["hit"] == {"1": pytest.approx(0.8333, abs=1e-4), "2": 0.8333}
    assert data["overall"]["complete"]["2"] == pytest.approx(0.6667, abs=1e-4)
    categories = data["categories"]
    assert {c: m["recall"]["2"] for c, m in categories.items()} == {
        "1": 0.5,
        "2": 1.0,
        "3": 0.0,
        "4": 1.0,
    }
    assert {c: m["count"] for c, m in categories.items()} == {"1": 1, "2": 1, "3": 1, "4": 3}
    assert categories["1"]["name"] == "multi-hop"
    assert data["macro_recall"]["2"] == 0.625
    assert data["conversations"]["conv-x"]["recall"]["2"] == 0.7
    assert data["conversations"]["conv-y"]["recall"]["2"] == 1.0
    assert data["foreign_results"] == 0
    assert data["fallbacks"] == 0
    # The throwaway tenant and all its rows are gone.
    assert data["memories_deleted"] == 7
    assert Tenant.objects.count() == tenants_before
    assert Memory.objects.count() == 0


def test_hybrid_returns_every_turn_of_a_small_conversation_and_nothing_foreign(tiny_locomo):
    data = _run(tiny_locomo, "--conversations", "conv-x", "--mode", "hybrid")

    # limit=50 > 5 turns: the vector leg ranks all of them, so every evidence id is in R_50.
    assert data["questions"] == 5
    assert data["overall"]["recall"]["50"] == 1.0
    assert data["foreign_results"] == 0
    assert data["conversations"] == {"conv-x": data["conversations"]["conv-x"]}


def test_missing_dataset_is_a_clean_error(tmp_path):
    with pytest.raises(CommandError, match="no dataset"):
        call_command("recall_eval", "--path", str(tmp_path / "missing.json"))
