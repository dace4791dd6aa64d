"""Hybrid fusion, convex (the default) and weighted reciprocal rank: scores, labels and a
total, repeatable order."""

import random
import uuid

import pytest

from apps.memory.selectors import fuse


def _ids(count: int, seed: int) -> list[uuid.UUID]:
    rng = random.Random(seed)
    return [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(count)]


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_first_in_both_legs_scores_one_and_leads(settings, fusion):
    settings.MEMORY_RECALL_FUSION = fusion
    settings.MEMORY_RECALL_SEMANTIC_WEIGHT = 1.0
    settings.MEMORY_RECALL_KEYWORD_WEIGHT = 1.0
    both, semantic_only, keyword_only = _ids(3, seed=1)

    fused = fuse([(both, 0.1), (semantic_only, 0.2)], [(both, 9.0), (keyword_only, 3.0)], 10)

    assert fused[0].pk == both
    assert fused[0].score == 1.0
    assert fused[0].legs == {"semantic", "keyword"}
    assert {hit.pk: hit.legs for hit in fused[1:]} == {
        semantic_only: {"semantic"},
        keyword_only: {"keyword"},
    }


def test_equal_rrf_scores_go_to_the_better_semantic_rank_then_by_id(settings):
    settings.MEMORY_RECALL_FUSION = "rrf"
    settings.MEMORY_RECALL_SEMANTIC_WEIGHT = 1.0
    settings.MEMORY_RECALL_KEYWORD_WEIGHT = 1.0
    semantic = _ids(40, seed=2)
    keyword = _ids(40, seed=3)
    # Rank r in one leg only scores the same whichever leg it is: the semantic one goes first.
    fused = fuse([(pk, 0.0) for pk in semantic], [(pk, 1.0) for pk in keyword], 80)

    assert [hit.pk for hit in fused[0::2]] == semantic
    assert [hit.pk for hit in fused[1::2]] == keyword


def test_convex_fusion_weighs_each_legs_normalised_score(settings):
    settings.MEMORY_RECALL_FUSION = "convex"
    settings.MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT = 0.4
    near, middle, far, words_only = _ids(4, seed=4)

    # Similarities 0.9 / 0.7 / 0.5 → 1, 0.5, 0; BM25 8 / 5 / 2 → 1, 0.5, 0.
    fused = fuse(
        [(near, 0.1), (middle, 0.3), (far, 0.5)],
        [(words_only, 8.0), (middle, 5.0), (near, 2.0)],
        10,
    )

    # words_only 0.6 · 1; middle 0.4 · 0.5 + 0.6 · 0.5; near 0.4 · 1 + 0.6 · 0; far 0.
    assert [(hit.pk, hit.score) for hit in fused] == [
        (words_only, 0.6),
        (middle, 0.5),
        (near, 0.4),
        (far, 0.0),
    ]
    assert [hit.legs for hit in fused] == [
        {"keyword"},
        {"semantic", "keyword"},
        {"semantic", "keyword"},
        {"semantic"},
    ]


def test_convex_fusion_scores_a_leg_of_equal_candidates_as_its_best(settings):
    settings.MEMORY_RECALL_FUSION = "convex"
    settings.MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT = 0.5
    first, second = _ids(2, seed=5)

    fused = fuse([(first, 0.2), (second, 0.2)], [], 10)

    assert [(hit.pk, hit.score) for hit in fused] == [(first, 0.5), (second, 0.5)]


def test_a_keyword_leg_of_common_words_only_weighs_in_proportion(settings):
    settings.MEMORY_RECALL_FUSION = "convex"
    settings.MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT = 0.45
    settings.MEMORY_RECALL_KEYWORD_CONFIDENT_BM25 = 1.0
    settings.MEMORY_RECALL_KEYWORD_CONFIDENT_SPREAD = 0.5
    job, museums = _ids(2, seed=6)
    # Only "user", in every memory, matched: the shorter memory's BM25 is a little higher.
    semantic = [(job, 0.57), (museums, 0.81)]

    weak = fuse(semantic, [(museums, 0.1), (job, 0.09)], 10)
    strong = fuse(semantic, [(museums, 0.1), (job, 0.02)], 10)

    # Best 0.1 (of 1.0) and a spread of 10 % (of 50 %): the leg weighs 0.55 · 0.2.
    assert [(hit.pk, hit.score) for hit in weak] == [(job, 0.45), (museums, 0.11)]
    # A word that tells a small store's memories apart (80 % spread) weighs in full.
    assert [(hit.pk, hit.score) for hit in strong] == [(museums, 0.55), (job, 0.45)]
    # So does any leg whose best reaches the bar.
    confident = fuse(semantic, [(museums, 2.0), (job, 1.8)], 10)
    assert [(hit.pk, hit.score) for hit in confident] == [(museums, 0.55), (job, 0.45)]
