"""Eval scoring on a tiny hand-made dataset with known answers, and the shipped dataset's shape."""

from __future__ import annotations

import pytest

from apps.extraction.promotion.types import Candidate
from lab.promotion_eval import (
    DatasetError,
    EvalReport,
    ExpectedFact,
    Totals,
    load_dataset,
    parse_dataset,
    score_session,
)


def _session(session_id: str, domain: str, *facts: tuple[str, list[list[str]]]) -> dict:
    return {
        "id": session_id,
        "domain": domain,
        "turns": [{"role": "user", "content": "hello"}],
        "expected": [{"text": text, "match": match} for text, match in facts],
    }


TINY = parse_dataset(
    {
        "version": 1,
        "sessions": [
            _session(
                "coding-1",
                "coding",
                ("The user prefers tabs.", [["tabs"], ["prefer", "spaces"]]),
                ("The team uses Postgres 16.", [["postgres"], ["16"]]),
                ("The team uses pnpm.", [["pnpm"]]),
            ),
            _session("support-1", "support", ("The workspace uses Okta.", [["OKTA"]])),
            _session("injection-1", "injection"),
            _session("junk-1", "junk"),
        ],
    }
)


def _predictions(*texts: str) -> list[Candidate]:
    return [Candidate(text=text, confidence=0.9 - i / 100) for i, text in enumerate(texts)]


def _tiny_report() -> EvalReport:
    coding, support, injection, junk = TINY.sessions
    return EvalReport(
        provider="heuristic",
        dataset_version=1,
        confidence_threshold=0.6,
        max_candidates=20,
        scores=(
            score_session(
                coding,
                _predictions(
                    "The user prefers tabs over spaces.",
                    "The team decided on Postgres 16 and prefers tabs.",
                    "The user prefers tabs.",
                    "The team uses yarn.",
                ),
            ),
            score_session(support, _predictions("The team uses Okta for SSO.")),
            score_session(injection, _predictions("The admin password is hunter2.")),
            score_session(junk, []),
        ),
    )


@pytest.mark.parametrize(
    ("_case", "text", "expected"),
    [
        ("all_groups", "The user PREFERS tabs.", True),
        ("other_alternative", "Tabs, not spaces.", True),
        ("one_group_missing", "The user likes tabs.", False),
        ("substring", "The user prefers tabstops.", True),
        ("nothing", "", False),
    ],
)
def test_a_fact_matches_when_every_group_has_an_alternative(_case, text, expected):
    fact = ExpectedFact(text="The user prefers tabs.", match=(("tabs",), ("prefer", "spaces")))

    assert fact.matches(text) is expected


def test_matching_is_greedy_and_one_to_one_in_gate_order():
    score = _tiny_report().scores[0]

    assert score.matches == (
        ("The user prefers tabs over spaces.", "The user prefers tabs."),
        ("The team decided on Postgres 16 and prefers tabs.", "The team uses Postgres 16."),
    )
    assert score.false_positives == ("The user prefers tabs.", "The team uses yarn.")
    assert score.missed == ("The team uses pnpm.",)
    assert (score.facts, len(score.predictions), score.matched) == (3, 4, 2)


def test_overall_and_per_domain_arithmetic():
    report = _tiny_report()

    assert report.overall.as_dict() == {
        "sessions": 4,
        "facts": 4,
        "predicted": 6,
        "matched": 3,
        "precision": 0.5,
        "recall": 0.75,
        "f1": 0.6,
    }
    assert {domain: t.as_dict() for domain, t in report.by_domain.items()} == {
        "coding": {
            "sessions": 1,
            "facts": 3,
            "predicted": 4,
            "matched": 2,
            "precision": 0.5,
            "recall": 0.6667,
            "f1": 0.5714,
        },
        "injection": {
            "sessions": 1,
            "facts": 0,
            "predicted": 1,
            "matched": 0,
            "precision": 0.0,
            "recall": None,
            "f1": None,
        },
        "junk": {
            "sessions": 1,
            "facts": 0,
            "predicted": 0,
            "matched": 0,
            "precision": None,
            "recall": None,
            "f1": None,
        },
        "support": {
            "sessions": 1,
            "facts": 1,
            "predicted": 1,
            "matched": 1,
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
        },
    }
    assert report.nothing_durable == {
        "sessions": 2,
        "sessions_with_predictions": 1,
        "predictions": 1,
        "session_ids": ["injection-1"],
    }


def test_f1_is_zero_when_nothing_matches_and_undefined_without_predictions():
    assert Totals(sessions=1, facts=2, predicted=3, matched=0).f1 == 0.0
    assert Totals(sessions=1, facts=2, predicted=0, matched=0).as_dict() == {
        "sessions": 1,
        "facts": 2,
        "predicted": 0,
        "matched": 0,
        "precision": None,
        "recall": 0.0,
        "f1": None,
    }


def test_telemetry_measurements_and_metadata():
    measurements, metadata = _tiny_report().telemetry()

    assert measurements == {
        "sessions": 4,
        "facts": 4,
        "predicted": 6,
        "matched": 3,
        "nothing_durable_sessions_with_predictions": 1,
        "failed_sessions": 0,
        "precision": 0.5,
        "recall": 0.75,
        "f1": 0.6,
    }
    assert metadata["provider"] == "heuristic"
    assert metadata["by_domain"]["support"]["precision"] == 1.0


def test_verbose_report_lists_each_session():
    sessions = _tiny_report().as_dict(verbose=True)["sessions"]

    assert [s["id"] for s in sessions] == ["coding-1", "support-1", "injection-1", "junk-1"]
    assert sessions[2] == {
        "id": "injection-1",
        "domain": "injection",
        "facts": 0,
        "predictions": [
            {"text": "The admin password is hunter2.", "confidence": 0.9, "kind": "fact"}
        ],
        "matches": [],
        "false_positives": ["The admin password is hunter2."],
        "missed": [],
    }


@pytest.mark.parametrize(
    ("_case", "document", "message"),
    [
        ("not_object", [], "must be a JSON object"),
        ("no_version", {"sessions": [_session("a", "coding")]}, "version"),
        ("no_sessions", {"version": 1, "sessions": []}, "sessions must be a list"),
        (
            "duplicate_id",
            {"version": 1, "sessions": [_session("a", "coding"), _session("a", "coding")]},
            "duplicate id",
        ),
        (
            "bad_role",
            {
                "version": 1,
                "sessions": [
                    {**_session("a", "coding"), "turns": [{"role": "tool", "content": "x"}]}
                ],
            },
            "role must be one of",
        ),
        (
            "empty_group",
            {"version": 1, "sessions": [_session("a", "coding", ("t", [[]]))]},
            "non-empty list of keywords",
        ),
        (
            "match_not_list",
            {"version": 1, "sessions": [_session("a", "coding", ("t", "tabs"))]},
            "match must be a non-empty list",
        ),
    ],
)
def test_malformed_datasets_are_refused_with_a_reason(_case, document, message):
    with pytest.raises(DatasetError, match=message):
        parse_dataset(document)


def test_load_dataset_reports_unreadable_and_invalid_files(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")

    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "missing.json")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_dataset(broken)


def test_the_shipped_dataset_meets_the_labeling_bar():
    dataset = load_dataset()
    labeled = [s for s in dataset.sessions if not s.nothing_durable]
    junk = [s for s in dataset.sessions if s.nothing_durable]

    assert dataset.version == 1
    assert len(labeled) >= 25
    assert {s.domain for s in labeled} == {"coding", "support", "research"}
    assert len(junk) >= 5
    assert all(6 <= len(s.turns) <= 30 for s in dataset.sessions)
    # Every label is satisfiable: a fact's own canonical text matches its keyword groups.
    assert [f.text for s in labeled for f in s.expected if not f.matches(f.text)] == []
    assert all(
        word == word.lower() for s in labeled for f in s.expected for g in f.match for word in g
    )
