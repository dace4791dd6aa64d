"""The diversity selector: its four stages and its four load-bearing properties, one test each."""

from __future__ import annotations

import math

import pytest

from apps.knowledge.diversity import Candidate, select


def unit(*components: float) -> list[float]:
    norm = math.sqrt(sum(c * c for c in components))
    return [c / norm for c in components]


def angle(degrees: float) -> list[float]:
    """A unit vector in the plane; cos(angle between two of them) is their similarity."""
    radians = math.radians(degrees)
    return [math.cos(radians), math.sin(radians), 0.0]


def cand(key: str, score: float | None, vector=None, fingerprint: str | None = None) -> Candidate:
    return Candidate(key=key, item=key, score=score, vector=vector, fingerprint=fingerprint)


def keys(candidates) -> list[str]:
    return [c.key for c in candidates]


def test_a_near_duplicate_of_a_selected_candidate_is_dropped_and_its_slot_refilled():
    # given: b is a near-copy of a (cos 0.999); c and d are distinct
    pool = [
        cand("a", 1.0, angle(0)),
        cand("b", 0.9, angle(2)),
        cand("c", 0.8, angle(60)),
        cand("d", 0.7, angle(120)),
    ]

    # when
    outcome = select(pool, limit=3, lambda_=0.7, near_dup_threshold=0.95)

    # then
    assert keys(outcome.selected) == ["a", "c", "d"]
    assert outcome.dropped == {"b": "near_duplicate"}
    assert outcome.meta["selected"] == 3
    assert outcome.meta["dropped_near_duplicates"] == 1


def test_selection_never_reorders_even_when_mmr_picks_a_lower_rank_first():
    # given: with a low lambda, MMR prefers the dissimilar "d" over "b" and "c"
    pool = [
        cand("a", 1.0, angle(0)),
        cand("b", 0.95, angle(30)),
        cand("c", 0.9, angle(40)),
        cand("d", 0.5, angle(180)),
    ]

    # when
    outcome = select(pool, limit=2, lambda_=0.3, near_dup_threshold=0.99)

    # then: d was chosen, but the output keeps the input's rank order
    assert keys(outcome.selected) == ["a", "d"]
    assert keys(outcome.unpicked) == ["b", "c"]


def test_a_candidate_without_a_vector_is_never_dropped():
    # given: three identical vectors, and one candidate whose vector could not be loaded
    pool = [
        cand("a", 1.0, angle(0)),
        cand("b", 0.9, angle(0)),
        cand("c", 0.8, None),
        cand("d", 0.7, angle(0)),
    ]

    # when
    outcome = select(pool, limit=3, lambda_=0.7, near_dup_threshold=0.95)

    # then: b and d are near-duplicates of a; c is unmeasurable, not similar
    assert keys(outcome.selected) == ["a", "c"]
    assert outcome.dropped == {"b": "near_duplicate", "d": "near_duplicate"}
    assert outcome.meta["vectors_available"] == 3
    assert outcome.meta["selected"] == 2


def test_lambda_one_is_exactly_the_top_n():
    # given: b and c resemble a (below the near-dup threshold), so MMR at 0.7 trades b for d
    pool = [
        cand("a", 1.0, angle(0)),
        cand("b", 0.99, angle(25)),
        cand("c", 0.98, angle(35)),
        cand("d", 0.6, angle(180)),
        cand("e", 0.3, angle(90)),
    ]

    # when
    relevance_only = select(pool, limit=3, lambda_=1.0, near_dup_threshold=0.99)
    diversified = select(pool, limit=3, lambda_=0.7, near_dup_threshold=0.99)

    # then
    assert keys(relevance_only.selected) == ["a", "b", "c"]
    assert keys(diversified.selected) == ["a", "c", "d"]
    assert relevance_only.meta["lambda"] == 1.0


def test_near_duplicates_are_measured_against_the_selected_set_not_the_query():
    # given: a query-relevance of 1.0 for both "a" and "b", which are far apart from each other;
    # "c" is barely relevant but a near-copy of "a"
    pool = [
        cand("a", 1.0, angle(0)),
        cand("b", 1.0, angle(90)),
        cand("c", 0.1, angle(1)),
        cand("d", 0.05, angle(200)),
    ]

    # when
    outcome = select(pool, limit=3, lambda_=0.7, near_dup_threshold=0.95)

    # then: both relevant articles stay (one fact each); c is one fact twice and goes
    assert keys(outcome.selected) == ["a", "b", "d"]
    assert outcome.dropped == {"c": "near_duplicate"}


def test_already_seen_candidates_are_dropped_and_refilled_from_unseen_ones():
    # given
    pool = [cand(k, 1.0 - i / 10, angle(i * 40)) for i, k in enumerate("abcde")]

    # when
    outcome = select(pool, limit=2, history_seen={"a", "b"}, lambda_=1.0)

    # then
    assert keys(outcome.selected) == ["c", "d"]
    assert outcome.meta["dropped_already_seen"] == 2
    assert outcome.meta["readmitted_already_seen"] == 0


def test_the_history_floor_readmits_the_highest_ranked_repeats():
    # given: the session has seen every candidate but one
    pool = [cand(k, 1.0 - i / 10, angle(i * 40)) for i, k in enumerate("abcd")]

    # when
    outcome = select(pool, limit=3, history_seen={"a", "b", "c"}, near_dup_threshold=0.99)

    # then: never an empty slot; the best repeats come back in rank order
    assert keys(outcome.selected) == ["a", "b", "d"]
    assert outcome.readmitted == ["a", "b"]
    assert outcome.meta["readmitted_already_seen"] == 2
    assert outcome.meta["dropped_already_seen"] == 1


def test_exact_fingerprints_collapse_to_the_highest_ranked_and_none_is_not_a_fingerprint():
    # given
    pool = [
        cand("a", 1.0, None, "h1"),
        cand("b", 0.9, None, "h1"),
        cand("c", 0.8, None, None),
        cand("d", 0.7, None, None),
        cand("e", 0.6, None, "h2"),
    ]

    # when
    outcome = select(pool, limit=5)

    # then
    assert keys(outcome.selected) == ["a", "c", "d", "e"]
    assert outcome.dropped == {"b": "exact_duplicate"}
    assert outcome.meta["dropped_exact_duplicates"] == 1


def test_a_pinned_candidate_is_selected_even_when_already_seen_and_counts_as_selected():
    # given: "p" is pinned (the curated answer) and was already shown; "b" is its near-copy
    pool = [
        cand("p", None, angle(0)),
        cand("a", 1.0, angle(90)),
        cand("b", 0.9, angle(1)),
        cand("c", 0.8, angle(200)),
    ]

    # when
    outcome = select(pool, limit=3, pinned={"p"}, history_seen={"p"}, near_dup_threshold=0.95)

    # then
    assert keys(outcome.selected) == ["p", "a", "c"]
    assert outcome.dropped == {"b": "near_duplicate"}
    assert outcome.meta["dropped_already_seen"] == 0


def test_meta_reports_every_counter_and_the_knobs_applied():
    # given
    pool = [cand("a", 1.0, angle(0)), cand("b", 0.5, None)]

    # when
    outcome = select(pool, limit=5, lambda_=0.6, near_dup_threshold=0.9)

    # then
    assert outcome.meta == {
        "enabled": True,
        "lambda": 0.6,
        "near_dup_threshold": 0.9,
        "candidates": 2,
        "selected": 2,
        "vectors_available": 1,
        "dropped_near_duplicates": 0,
        "dropped_exact_duplicates": 0,
        "dropped_already_seen": 0,
        "readmitted_already_seen": 0,
    }


def test_knobs_default_to_settings_and_are_overridable_per_call(settings):
    # given
    settings.KNOWLEDGE_DIVERSITY_LAMBDA = 0.5
    settings.KNOWLEDGE_DIVERSITY_NEAR_DUP_THRESHOLD = 0.8
    pool = [cand("a", 1.0, angle(0)), cand("b", 0.9, angle(30))]  # cos 0.866

    # when
    from_settings = select(pool, limit=2)
    overridden = select(pool, limit=2, near_dup_threshold=0.9)

    # then
    assert from_settings.meta["lambda"] == 0.5
    assert keys(from_settings.selected) == ["a"]
    assert keys(overridden.selected) == ["a", "b"]


def test_disabled_selection_is_plain_top_n():
    # given
    pool = [cand("a", 1.0, angle(0)), cand("b", 0.9, angle(0)), cand("c", 0.8, angle(0))]

    # when
    outcome = select(pool, limit=2, enabled=False, history_seen={"a"})

    # then
    assert keys(outcome.selected) == ["a", "b"]
    assert outcome.meta["enabled"] is False
    assert outcome.meta["dropped_near_duplicates"] == 0


@pytest.mark.parametrize(("_case", "limit"), [("zero", 0), ("larger_than_pool", 10)])
def test_limits_outside_the_pool_are_handled(_case, limit):
    # given
    pool = [cand("a", 1.0, unit(1, 0)), cand("b", 0.5, unit(0, 1))]

    # when
    outcome = select(pool, limit=limit)

    # then
    assert len(outcome.selected) == min(limit, 2)
    assert len(outcome.selected) + len(outcome.unpicked) == 2
