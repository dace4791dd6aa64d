"""The fail-closed parser: malformed model output yields no candidates and never raises."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from apps.extraction.promotion.parser import MAX_CANDIDATE_CHARS, MAX_CROSS_LINKS, parse_candidates
from apps.extraction.promotion.types import CANDIDATE_KINDS, Candidate

VALID = {
    "text": "The user prefers tabs.",
    "confidence": 0.9,
    "kind": "preference",
    "cross_links": [],
}


def _document(*items: object) -> str:
    return json.dumps({"memories": list(items)})


@pytest.mark.parametrize(
    ("_case", "raw"),
    [
        ("empty", ""),
        ("whitespace", "   \n"),
        ("not_json", "Sure! Here are the memories: the user prefers tabs."),
        ("truncated", '{"memories": [{"text": "The user prefers tabs.", "confidence": 0.9'),
        ("json_array", json.dumps([VALID])),
        ("json_string", json.dumps("memories")),
        ("json_null", "null"),
        ("no_memories_key", json.dumps({"facts": [VALID]})),
        ("memories_is_object", json.dumps({"memories": VALID})),
        ("memories_is_string", json.dumps({"memories": "The user prefers tabs."})),
        ("memories_is_null", json.dumps({"memories": None})),
        ("deep_nesting", "[" * 100_000 + "]" * 100_000),
        ("fence_without_json", "```\nno json here\n```"),
    ],
)
def test_malformed_documents_yield_no_candidates(_case, raw):
    assert parse_candidates(raw) == []


@pytest.mark.parametrize(
    ("_case", "item"),
    [
        ("not_an_object", "The user prefers tabs."),
        ("null_item", None),
        ("missing_text", {"confidence": 0.9}),
        ("text_not_string", {**VALID, "text": 42}),
        ("text_list", {**VALID, "text": ["The user prefers tabs."]}),
        ("blank_text", {**VALID, "text": "   "}),
        ("text_too_long", {**VALID, "text": "x" * (MAX_CANDIDATE_CHARS + 1)}),
        ("missing_confidence", {"text": "The user prefers tabs."}),
        ("confidence_string", {**VALID, "confidence": "0.9"}),
        ("confidence_bool", {**VALID, "confidence": True}),
        ("confidence_negative", {**VALID, "confidence": -0.01}),
        ("confidence_above_one", {**VALID, "confidence": 1.01}),
        ("confidence_huge", {**VALID, "confidence": 1e308}),
        ("unknown_kind", {**VALID, "kind": "instruction"}),
        ("kind_not_string", {**VALID, "kind": 3}),
        ("cross_links_not_list", {**VALID, "cross_links": "article-1"}),
    ],
)
def test_invalid_items_are_dropped_one_by_one(_case, item):
    assert parse_candidates(_document(item, VALID)) == [
        Candidate(text="The user prefers tabs.", confidence=0.9, kind="preference")
    ]


@pytest.mark.parametrize("confidence", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_confidence_is_dropped(confidence):
    raw = f'{{"memories": [{{"text": "The user prefers tabs.", "confidence": {confidence}}}]}}'

    assert parse_candidates(raw) == []


def test_boundaries_and_defaults_are_accepted():
    raw = _document(
        {"text": "  The user\n prefers   tabs. ", "confidence": 0},
        {"text": "The team uses Postgres.", "confidence": 1, "kind": "decision"},
    )

    assert parse_candidates(raw) == [
        Candidate(text="The user prefers tabs.", confidence=0.0, kind="fact"),
        Candidate(text="The team uses Postgres.", confidence=1.0, kind="decision"),
    ]


def test_cross_links_keep_only_strings_up_to_the_cap():
    links = ["a1", 7, None, {"id": "x"}] + [f"l{i}" for i in range(MAX_CROSS_LINKS + 5)]

    [candidate] = parse_candidates(_document({**VALID, "cross_links": links}))

    assert candidate.cross_links == ("a1", *(f"l{i}" for i in range(MAX_CROSS_LINKS - 1)))


@pytest.mark.parametrize(
    ("_case", "raw"),
    [
        ("json_fence", "```json\n" + _document(VALID) + "\n```"),
        ("bare_fence", "```\n" + _document(VALID) + "\n```"),
        ("surrounding_whitespace", "\n\n  " + _document(VALID) + "  \n"),
    ],
)
def test_fenced_or_padded_json_is_accepted(_case, raw):
    assert parse_candidates(raw) == [
        Candidate(text="The user prefers tabs.", confidence=0.9, kind="preference")
    ]


def _junk(rng: random.Random, depth: int = 0) -> object:
    choices: list[Callable[[], object]] = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.randint(-5, 5),
        lambda: rng.uniform(-2, 2),
        lambda: rng.choice(["", "text", "The user prefers tabs.", "{", "```"]),
        lambda: rng.choice(CANDIDATE_KINDS),
    ]
    if depth < 3:
        choices += [
            lambda: [_junk(rng, depth + 1) for _ in range(rng.randint(0, 3))],
            lambda: {
                rng.choice(["text", "confidence", "kind", "cross_links", "memories", "x"]): _junk(
                    rng, depth + 1
                )
                for _ in range(rng.randint(0, 4))
            },
        ]
    return rng.choice(choices)()


def _mutated(rng: random.Random) -> tuple[object, bool]:
    """VALID with some fields replaced by junk or removed; True when left untouched."""
    item = dict(VALID)
    for key in list(item):
        roll = rng.random()
        if roll < 0.15:
            del item[key]
        elif roll < 0.3:
            item[key] = _junk(rng)
    return item, item == VALID


def test_random_shapes_never_raise_and_only_yield_valid_candidates():
    rng = random.Random(20240501)
    parsed = intact_total = 0
    for _ in range(2_000):
        items = [_mutated(rng) for _ in range(rng.randint(0, 4))]
        intact = sum(untouched for _, untouched in items)
        document: object = {"memories": [item for item, _ in items]}
        if rng.random() < 0.1:
            document, intact = _junk(rng), 0
        raw = json.dumps(document)
        if rng.random() < 0.1:
            raw, intact = raw[: rng.randint(0, len(raw) - 1)], 0

        candidates = parse_candidates(raw)

        for candidate in candidates:
            assert isinstance(candidate.text, str)
            assert candidate.text
            assert candidate.text.strip() == candidate.text
            assert 0.0 <= candidate.confidence <= 1.0
            assert candidate.kind in CANDIDATE_KINDS
            assert all(isinstance(link, str) for link in candidate.cross_links)
        assert len(candidates) >= intact
        parsed += len(candidates)
        intact_total += intact
    # The generator exercises both sides: plenty of junk and plenty of survivors.
    assert intact_total > 500
    assert parsed > intact_total
