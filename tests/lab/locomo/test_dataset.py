import json

import pytest

from lab.locomo import dataset as locomo

#: The metadata keys that make the service thread a memory (docs/memory.md, "Derived context").
SESSION_KEYS = {"session_id", "session", "thread_id", "conversation_id"}


def thread_key(metadata: dict) -> bool:
    return bool(SESSION_KEYS & set(metadata))


@pytest.mark.parametrize(
    ("_case", "raw", "expected"),
    [
        ("canonical", ["D1:3"], ("D1:3",)),
        ("semicolon", ["D8:6; D9:17"], ("D8:6", "D9:17")),
        ("spaces", ["D9:1 D4:4 D4:6"], ("D9:1", "D4:4", "D4:6")),
        ("extra_colon", ["D:11:26"], ("D11:26",)),
        ("leading_zero", ["D30:05"], ("D30:5",)),
        ("bare_d", ["D"], ()),
        ("not_a_turn", ["D10:19"], ()),
        ("duplicates", ["D1:3", "D1:3"], ("D1:3",)),
    ],
)
def test_evidence_is_normalised_and_checked_against_the_conversation(_case, raw, expected):
    valid = frozenset({"D1:3", "D8:6", "D9:17", "D9:1", "D4:4", "D4:6", "D11:26", "D30:5"})

    assert locomo.normalise_evidence(raw, valid) == expected


def test_loading_keeps_scorable_questions_and_formats_turns(tiny_locomo):
    conversations = locomo.load_locomo(tiny_locomo)

    first = conversations[0]
    assert [c.sample_id for c in conversations] == ["conv-x", "conv-y"]
    assert [s.number for s in first.sessions] == [1, 2]
    assert [(q.category, q.evidence) for q in first.questions] == [
        (4, ("D1:1",)),
        (1, ("D1:3", "D2:1")),
        (2, ("D2:2",)),
        (3, ("D2:1",)),
        (4, ("D1:2",)),
    ]
    # Category 3 with [] and category 4 with only "D"; category 5 is never counted.
    assert first.skipped_questions == 2
    specs = locomo.memory_specs(first, context_turns=1)
    assert specs[3].text == "Ben: I started learning violin [shares a photo of a violin]"
    assert specs[3].context == "09 June 2023\nAnn: We visited the aquarium"
    assert specs[1].context == (
        "08 May 2023\nAnn: I adopted a puppy named Rex\nAnn: My sister lives in Lisbon"
    )
    assert specs[3].metadata == {
        "sample_id": "conv-x",
        "dia_id": "D2:1",
        "session": 2,
        "session_date": "2023-06-09T10:00:00",
        "speaker": "Ben",
    }
    assert locomo.memory_specs(first, context_turns=-1)[1].context == ""


def test_unknown_conversation_is_refused(tiny_locomo):
    with pytest.raises(ValueError, match="conv-z"):
        locomo.load_locomo(tiny_locomo, sample_ids=["conv-z"])


def test_metric_arithmetic():
    evidence, retrieved = ("a", "b", "c"), ("x", "a", "y", "c")

    assert locomo.recall_at(evidence, retrieved, 1) == 0.0
    assert locomo.recall_at(evidence, retrieved, 2) == pytest.approx(1 / 3)
    assert locomo.recall_at(evidence, retrieved, 4) == pytest.approx(2 / 3)
    assert locomo.hit_at(evidence, retrieved, 2) == 1.0
    assert locomo.complete_at(evidence, retrieved, 4) == 0.0
    assert locomo.complete_at(("a",), retrieved, 2) == 1.0


def test_a_fact_counts_every_turn_it_was_drawn_from():
    evidence, retrieved = ("a", "b", "c"), (("x", "a"), "y", ("b", "c"))

    assert locomo.recall_at(evidence, retrieved, 1) == pytest.approx(1 / 3)
    assert locomo.recall_at(evidence, retrieved, 2) == pytest.approx(1 / 3)
    assert locomo.recall_at(evidence, retrieved, 3) == 1.0
    assert locomo.complete_at(evidence, retrieved, 3) == 1.0
    assert locomo.hit_at(("y",), retrieved, 1) == 0.0


def test_client_specs_carry_text_and_metadata_only(tiny_locomo):
    first = locomo.load_locomo(tiny_locomo)[0]
    specs = locomo.client_specs(first)

    assert [spec.context for spec in specs] == [""] * 5
    assert specs[3].text == "Ben: I started learning violin [shares a photo of a violin]"
    assert specs[3].metadata == {
        "sample_id": "conv-x",
        "dia_id": "D2:1",
        "session": 2,
        "session_date": "2023-06-09T10:00:00",
        "speaker": "Ben",
    }
    assert locomo.loader_specs(first, "client") == specs


def test_unthreaded_specs_carry_no_session_key(tiny_locomo):
    first = locomo.load_locomo(tiny_locomo)[0]
    specs = locomo.loader_specs(first, "unthreaded")

    assert [spec.text for spec in specs] == [spec.text for spec in locomo.client_specs(first)]
    assert [spec.context for spec in specs] == [""] * 5
    assert specs[3].metadata == {
        "sample_id": "conv-x",
        "dia_id": "D2:1",
        "session_date": "2023-06-09T10:00:00",
    }
    assert not any(thread_key(spec.metadata) for spec in specs)
    # The client loader's turns do name their session, so the service threads them.
    assert all(thread_key(spec.metadata) for spec in locomo.client_specs(first))


def test_fact_specs_carry_no_session_key(tiny_locomo):
    sample = json.loads(tiny_locomo.read_text())[0]
    sample["observation"] = {"session_2_observation": {"Ann": [["Ann saw fish.", "D2:2"]]}}
    conversation = locomo.parse_conversation(sample)

    (spec,) = locomo.loader_specs(conversation, "facts")

    assert spec.text == "Ann saw fish."
    assert spec.metadata == {
        "sample_id": "conv-x",
        "session_date": "2023-06-09T10:00:00",
        "source_dia_ids": ["D2:2"],
    }
    assert not thread_key(spec.metadata)


def test_summary_is_micro_overall_and_macro_over_categories():
    results = [
        locomo.QuestionResult("c1", 1, ("a", "b"), ("a",), latency_ms=10),
        locomo.QuestionResult("c1", 4, ("a",), ("a",), latency_ms=20),
        locomo.QuestionResult("c2", 4, ("z",), ("y",), latency_ms=30),
    ]

    report = locomo.summarise(results, ks=(1,))

    assert report.overall.recall[1] == pytest.approx((0.5 + 1 + 0) / 3)
    assert report.categories[1].recall[1] == 0.5
    assert report.categories[4].recall[1] == 0.5
    assert report.macro_recall[1] == 0.5
    assert report.conversations["c1"].recall[1] == 0.75
    assert report.conversations["c2"].recall[1] == 0.0
    assert (report.latency_p50_ms, report.latency_p95_ms) == (20, 30)
