"""Weighted reciprocal rank fusion: scores, labels and a total, repeatable order."""

import random
import uuid

from apps.memory.selectors import fuse


def _ids(count: int, seed: int) -> list[uuid.UUID]:
    rng = random.Random(seed)
    return [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(count)]


def test_first_in_both_legs_scores_one_and_leads(settings):
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


def test_equal_scores_go_to_the_better_semantic_rank_then_by_id(settings):
    settings.MEMORY_RECALL_SEMANTIC_WEIGHT = 1.0
    settings.MEMORY_RECALL_KEYWORD_WEIGHT = 1.0
    semantic = _ids(40, seed=2)
    keyword = _ids(40, seed=3)
    # Rank r in one leg only scores the same whichever leg it is: the semantic one goes first.
    fused = fuse([(pk, 0.0) for pk in semantic], [(pk, 1.0) for pk in keyword], 80)

    assert [hit.pk for hit in fused[0::2]] == semantic
    assert [hit.pk for hit in fused[1::2]] == keyword
