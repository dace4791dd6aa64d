import copy
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory
from apps.tenancy.models import Tenant
from tests.lab.locomo.conftest import TINY

pytestmark = pytest.mark.django_db


def _run(path, *args):
    out = StringIO()
    call_command(
        "recall_eval", "--path", str(path), "--json", "--http-queries", "0", *args, stdout=out
    )
    return json.loads(out.getvalue())


def test_recall_eval_end_to_end_on_a_tiny_dataset(tiny_locomo):
    tenants_before = Tenant.objects.count()

    # Keyword mode, memories as a client writes them (no context): each question's words
    # match exactly the turns planned.
    data = _run(tiny_locomo, "--mode", "keyword", "--k", "1,2")

    assert data["questions"] == 6
    assert data["questions_skipped_no_evidence"] == 2
    assert data["memories"] == 7
    assert data["mode"] == "keyword"
    assert data["loader"] == "client"
    assert data["http_latency_ms"] is None
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


@pytest.fixture
def split_locomo(tmp_path):
    """The tiny dataset with conv-x as a dev conversation and conv-y as a held-out one."""
    samples = copy.deepcopy(TINY)
    samples[0]["sample_id"], samples[1]["sample_id"] = "conv-26", "conv-47"
    samples[0]["observation"] = {
        "session_1_observation": {
            "Ann": [["Ann adopted a puppy called Rex.", "D1:1"]],
            "Ben": [["Ben owns a red kayak.", ["D1:2"]]],
        },
        "session_2_observation": {
            "Ann": [["Ann's sister lives in Lisbon and Ann went to the aquarium.", "D1:3, D2:2"]],
        },
    }
    path = tmp_path / "split_locomo.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_figures_are_reported_per_split(split_locomo):
    data = _run(split_locomo, "--mode", "keyword", "--k", "1,2")

    assert set(data["splits"]) == {"dev", "heldout"}
    dev, heldout = data["splits"]["dev"], data["splits"]["heldout"]
    assert dev["overall"]["count"] == 5
    assert dev["overall"]["recall"]["2"] == 0.7
    assert heldout["overall"]["count"] == 1
    assert heldout["overall"]["recall"]["2"] == 1.0
    assert set(dev["categories"]) == {"1", "2", "3", "4"}
    assert set(heldout["categories"]) == {"4"}


def test_split_option_runs_that_split_only(split_locomo):
    data = _run(split_locomo, "--mode", "keyword", "--split", "heldout")

    assert data["conversations"] == {"conv-47": data["conversations"]["conv-47"]}
    assert data["memories"] == 2
    assert set(data["splits"]) == {"heldout"}


def test_a_split_without_conversations_is_a_clean_error(tiny_locomo):
    with pytest.raises(CommandError, match="no conversation of the dev split"):
        _run(tiny_locomo, "--split", "dev")


def test_neighbours_loader_adds_the_loader_context(tiny_locomo):
    client = _run(tiny_locomo, "--mode", "keyword", "--k", "1,2,5")
    neighbours = _run(tiny_locomo, "--mode", "keyword", "--k", "1,2,5", "--loader", "neighbours")

    assert neighbours["loader"] == "neighbours"
    assert neighbours["context_turns"] == 2
    assert client["context_turns"] is None
    # "Which instrument?" matches no turn's words; the turns around D2:1 name no instrument
    # either, so both loaders miss it; the neighbours' words make more rows match the rest.
    assert neighbours["overall"]["recall"]["5"] >= client["overall"]["recall"]["5"]
    assert neighbours["memories"] == client["memories"] == 7


def test_facts_loader_scores_the_union_of_each_facts_source_turns(split_locomo):
    data = _run(split_locomo, "--mode", "keyword", "--k", "1", "--loader", "facts")

    # Three facts for conv-26 (one write each), none for conv-47 (no observations).
    assert data["memories"] == 3
    conv = data["conversations"]["conv-26"]
    # puppy → the Rex fact (D1:1); sister → the Lisbon fact covers D1:3 of D1:3+D2:1;
    # aquarium → the same fact (D2:2); instrument → nothing; kayak → the kayak fact (D1:2).
    assert conv["recall"]["1"] == pytest.approx((1 + 0.5 + 1 + 0 + 1) / 5)
    assert data["foreign_results"] == 0


def test_unthreaded_loader_writes_the_turns_without_a_session(split_locomo):
    data = _run(split_locomo, "--mode", "keyword", "--k", "1", "--loader", "unthreaded")

    assert data["loader"] == "unthreaded"
    assert data["memories"] == 7
    assert data["foreign_results"] == 0


def test_loader_all_runs_every_protocol_and_summarises_each_split(split_locomo):
    data = _run(split_locomo, "--mode", "keyword", "--k", "1,2", "--loader", "all")

    assert data["loader"] == "all"
    assert data["protocols"] == ["unthreaded", "facts", "client"]
    assert {loader: run["memories"] for loader, run in data["runs"].items()} == {
        "unthreaded": 7,
        "facts": 3,
        "client": 7,
    }
    assert set(data["summary"]) == {"all", "dev", "heldout"}
    dev = data["summary"]["dev"]
    assert set(dev) == {"unthreaded", "facts", "client"}
    # The facts protocol's dev figure is the facts loader's own (see the test above).
    assert dev["facts"]["recall"]["1"] == pytest.approx((1 + 0.5 + 1 + 0 + 1) / 5)
    assert dev["client"]["count"] == 5
    assert set(dev["client"]["categories"]) == {"1", "2", "3", "4"}
    assert data["summary"]["heldout"]["client"]["recall"]["2"] == 1.0
    assert data["http_latency_ms"] is None
    assert Memory.objects.count() == 0


def test_loader_all_prints_a_table_per_split(split_locomo):
    out = StringIO()
    call_command(
        "recall_eval",
        "--path",
        str(split_locomo),
        "--http-queries",
        "0",
        "--mode",
        "keyword",
        "--k",
        "1,2",
        "--loader",
        "all",
        stdout=out,
    )

    lines = out.getvalue().splitlines()
    dev = lines.index("dev:")
    assert lines[dev + 2].split()[:4] == ["unthreaded", "5", "0.700", "0.700"]
    assert [line.split()[0] for line in lines[dev + 2 : dev + 5]] == [
        "unthreaded",
        "facts",
        "client",
    ]
    assert "heldout:" in lines


@pytest.fixture
def dated_locomo(tmp_path):
    """conv-x with a later puppy turn that outranks the first by its words, and a question
    that names the day of the first."""
    data = copy.deepcopy(TINY[:1])
    data[0]["conversation"]["session_2"].append(
        {"speaker": "Ann", "dia_id": "D2:3", "text": "I say my puppy is the best puppy"}
    )
    data[0]["qa"] = [
        {
            "question": "What did Ann say about the puppy on 8 May 2023?",
            "evidence": ["D1:1"],
            "category": 4,
        }
    ]
    path = tmp_path / "dated_locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("_case", "args", "time_words", "recall"),
    [
        # Dated by session: the question's day names the first session, whose turns rank first.
        ("dated", ("--dated",), True, 1.0),
        # Written now, the day names a window no memory falls in: the ranking as without it.
        ("undated", (), True, 0.0),
        ("dated_without_time_words", ("--dated",), False, 0.0),
    ],
)
def test_dated_memories_let_a_questions_time_words_match(
    dated_locomo, settings, _case, args, time_words, recall
):
    settings.MEMORY_RECALL_TIME_WORDS = time_words
    # Each turn alone: a conversation the service infers would index the neighbours' words
    # with each turn, and the question's words would rank the first puppy turn without the day.
    settings.MEMORY_IMPLICIT_THREADS = False

    data = _run(dated_locomo, "--mode", "keyword", "--k", "1", "--loader", "unthreaded", *args)

    assert data["dated"] is bool(args)
    assert data["time_words"] is time_words
    assert data["time_word_questions"]["count"] == 1
    assert data["overall"]["recall"]["1"] == recall
