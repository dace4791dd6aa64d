"""``fact_change_eval`` on a tiny hand-made conversation in the LoCoMo shape (never the real,
CC BY-NC, file), and the benchmark's scoring."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from apps.memory.models import Memory
from apps.tenancy.models import Tenant
from lab.locomo.fact_changes import (
    Chain,
    Source,
    State,
    ahead,
    load_chains,
    states_of,
    supersede_correct,
)

pytestmark = pytest.mark.django_db


def _turn(speaker, dia_id, text):
    return {"speaker": speaker, "dia_id": dia_id, "text": text}


TINY = [
    {
        "sample_id": "conv-f1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("Ann", "D1:1", "Hi Ben! Do you have pets?"),
                _turn("Ben", "D1:2", "No, no pets right now. I work at the bakery."),
                _turn("Ann", "D1:3", "My sister lives in Lisbon."),
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                _turn("Ann", "D2:1", "How was your week, Ben?"),
                _turn("Ben", "D2:2", "I adopted a puppy named Rex! He is so sweet."),
                _turn("Ann", "D2:3", "I love the beach in summer."),
            ],
        },
        "qa": [],
        "observation": {
            "session_1_observation": {
                "Ben": [
                    ["Ben does not currently have any pets.", "D1:2"],
                    ["Ben works at the bakery.", "D1:2"],
                ],
                "Ann": [["Ann's sister lives in Lisbon.", "D1:3"]],
            },
            "session_2_observation": {
                "Ben": [["Ben adopted a puppy named Rex.", "D2:2"]],
                "Ann": [["Ann loves the beach in summer.", "D2:3"]],
            },
        },
        "session_summary": {},
        "event_summary": {},
    },
]
CHAINS = {
    "about": "test chains",
    "chains": [
        {
            "id": "conv-f1/ben/pets",
            "split": "dev",
            "conversation": "conv-f1",
            "speaker": "Ben",
            "attribute": "pets",
            "question": "Does Ben have a pet?",
            "states": [
                {"label": "no pets", "evidence": ["D1:2"], "terms": ["pet"]},
                {"label": "a puppy", "evidence": ["D2:2"], "terms": ["puppy", "rex"]},
            ],
        }
    ],
}


@pytest.fixture
def tiny(tmp_path):
    dataset = tmp_path / "tiny_locomo.json"
    dataset.write_text(json.dumps(TINY), encoding="utf-8")
    chains = tmp_path / "chains.json"
    chains.write_text(json.dumps(CHAINS), encoding="utf-8")
    return dataset, chains


def test_the_command_reports_current_first_as_of_and_precision_and_cleans_up(tiny):
    dataset, chains = tiny
    before = Memory.objects.count(), Tenant.objects.count()
    out = StringIO()

    call_command(
        "fact_change_eval", "--path", str(dataset), "--chains", str(chains), "--json", stdout=out
    )

    report = json.loads(out.getvalue())
    direct = report["splits"]["dev"]["direct"]
    assert (direct["changes"], direct["evaluable"]) == (1, 1)
    assert direct["current_first"]["rate"] == 1.0
    assert direct["as_of_earlier"]["rate"] == 1.0
    assert (direct["supersedes"], direct["supersede_precision"]["rate"]) == (1, 1.0)
    promoted = report["splits"]["dev"]["promoted"]
    assert promoted["current_first"]["rate"] == 1.0
    assert promoted["supersede_precision"]["rate"] == 1.0
    assert (Memory.objects.count(), Tenant.objects.count()) == before
    assert report["tenants_removed"] == 1


CHAIN = Chain(
    id="c",
    split="dev",
    conversation="conv",
    speaker="Ben",
    attribute="pets",
    question="?",
    states=(
        State(label="none", evidence=frozenset({"D1:2"}), terms=("pet",)),
        State(label="one", evidence=frozenset({"D2:2"}), terms=("puppy",)),
    ),
)


def test_a_memory_states_a_state_when_it_cites_its_turn_and_holds_its_term():
    assert states_of(CHAIN, Source(frozenset({"D1:2"}), "ben has no pets")) == {0}
    # The same turn, about something else it said: not that state.
    assert states_of(CHAIN, Source(frozenset({"D1:2"}), "ben works at the bakery")) == set()
    assert states_of(CHAIN, Source(frozenset({"D2:2", "D1:2"}), "puppy, no pets")) == {0, 1}


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [(1, 2, True), (2, 1, False), (3, None, True), (None, 2, False), (None, None, None)],
)
def test_ahead_is_decided_only_when_one_of_the_two_was_recalled(first, second, expected):
    assert ahead(first, second) is expected


def test_a_supersede_is_correct_only_from_an_earlier_state_to_a_later_one():
    old = Source(frozenset({"D1:2"}), "ben has no pets")
    new = Source(frozenset({"D2:2"}), "ben adopted a puppy")
    assert supersede_correct([CHAIN], old, new) is True
    assert supersede_correct([CHAIN], new, old) is False
    assert supersede_correct([CHAIN], old, Source(frozenset({"D9:9"}), "a puppy")) is False


def test_the_curated_chains_load_and_keep_dev_and_held_out_apart():
    chains = load_chains()

    dev = {chain.conversation for chain in chains if chain.split == "dev"}
    held_out = {chain.conversation for chain in chains if chain.split == "heldout"}
    assert dev <= {"conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44"}
    assert held_out <= {"conv-47", "conv-48", "conv-49", "conv-50"}
    assert all(len(chain.states) >= 2 for chain in chains)
