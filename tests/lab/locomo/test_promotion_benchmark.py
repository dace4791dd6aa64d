"""``promotion_eval --dataset locomo`` on a tiny hand-made file in the LoCoMo shape."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.memory.models import Memory, PromotionJob, SessionMemory, SessionPromotion
from apps.tenancy.models import Tenant
from lab.locomo.promotion import (
    CoverageResult,
    answer_coverage,
    content_words,
    totals,
)

pytestmark = pytest.mark.django_db


def _turn(speaker, dia_id, text):
    return {"speaker": speaker, "dia_id": dia_id, "text": text}


TINY = [
    {
        "sample_id": "conv-t1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("Ann", "D1:1", "Hi Ben! How are you?"),
                _turn("Ben", "D1:2", "Great! I bought a red kayak yesterday."),
                _turn("Ann", "D1:3", "My sister lives in Lisbon."),
            ],
        },
        "qa": [
            {
                "question": "Where does Ann's sister live?",
                "answer": "Lisbon",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {
                "question": "What did Ben buy?",
                "answer": "a red kayak",
                "evidence": ["D1:2"],
                "category": 1,
            },
            {
                "question": "When did Ben buy the kayak?",
                "answer": "7 May 2023",
                "evidence": ["D1:2"],
                "category": 2,
            },
            # No content words: not scored.
            {"question": "Is Ann sad?", "answer": "No", "evidence": ["D1:1"], "category": 4},
            # Adversarial: never asked.
            {"question": "What did Ann buy?", "evidence": ["D1:2"], "category": 5},
        ],
        "observation": {
            "session_1_observation": {
                "Ann": [["Ann's sister lives in Lisbon.", "D1:3"]],
                "Ben": [["Ben bought a kayak.", ["D1:2"]]],
            }
        },
    }
]


@pytest.fixture
def tiny_path(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return path


def _run(*args):
    out = StringIO()
    call_command("promotion_eval", "--dataset", "locomo", "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_content_words_are_lower_cased_without_stop_words():
    assert content_words("The Sunday before 25 May 2023") == {"sunday", "25", "may", "2023"}
    assert content_words("No, it was not.") == frozenset()
    assert content_words("Caroline's kids") == {"caroline", "kids"}


def test_coverage_is_the_share_of_answer_words_found():
    texts = ["Ben bought a kayak.", "Ann: my sister lives in Lisbon"]
    assert answer_coverage("a red kayak", texts) == 0.5
    assert answer_coverage("Lisbon", texts) == 1.0
    assert answer_coverage("7 May 2023", texts) == 0.0
    assert answer_coverage("yes", texts) is None
    # Whole words only: "kay" is not found inside "kayak".
    assert answer_coverage("kay", texts) == 0.0


def test_totals_are_micro_averages_and_count_full_answers():
    results = [
        CoverageResult("a", 4, 1.0),
        CoverageResult("a", 4, 0.5),
        CoverageResult("b", 2, 0.0),
        CoverageResult("b", 1, 1.0),
    ]
    figures = totals(results, memories={"a": 6, "b": 3}, sessions={"a": 2, "b": 1, "c": 9})
    assert figures.as_dict() == {
        "memories": 9,
        "sessions": 3,
        "memories_per_session": 3.0,
        "questions": 4,
        "coverage_at_10": 0.625,
        "full_at_10": 0.5,
    }


def test_locomo_benchmark_end_to_end_removes_its_tenants(tiny_path):
    tenants_before = Tenant.objects.count()

    data = _run("--path", str(tiny_path))

    assert data["conversations"] == ["conv-t1"]
    assert data["questions_without_content_words"] == 1
    turns, observations = data["all"]["turns"], data["all"]["observations"]
    # Three memories each fit in the ten recalled: coverage is what each store says.
    # turns: Lisbon 1, red kayak 1, 7 May 2023 0 (the turn says "yesterday").
    assert turns == {
        "memories": 3,
        "sessions": 1,
        "memories_per_session": 3.0,
        "questions": 3,
        "coverage_at_10": 0.6667,
        "full_at_10": 0.6667,
    }
    # observations: Lisbon 1, red kayak 1/2, date 0.
    assert observations["memories"] == 2
    assert observations["coverage_at_10"] == 0.5
    assert observations["full_at_10"] == 0.3333
    # promoted: "Ben bought a red kayak on 7 May 2023. (said on 8 May 2023)" and "Ann's sister
    # lives in Lisbon. (…)"; the greeting and question yield nothing. Every answer is covered.
    assert data["all"]["promoted"] == {
        "memories": 2,
        "sessions": 1,
        "memories_per_session": 2.0,
        "questions": 3,
        "coverage_at_10": 1.0,
        "full_at_10": 1.0,
    }
    assert data["promotion"]["sessions"] == 1
    assert data["promotion"]["jobs"] == {"completed": 1}
    assert data["promotion"]["compile_ms_per_session"] >= 0
    assert data["promotion"]["repromote_reasons"] == {"unchanged": 1}
    assert data["promotion"]["repromote_rows_added"] == 0
    # No split of the real dataset was run.
    assert data["splits"] == {}
    assert data["tenants_removed"] == 1
    assert Tenant.objects.count() == tenants_before
    for model in (Memory, SessionMemory, PromotionJob, SessionPromotion):
        assert model.objects.count() == 0


def test_stores_can_be_chosen(tiny_path):
    data = _run("--path", str(tiny_path), "--stores", "observations")

    assert list(data["all"]) == ["observations"]
    assert "promotion" not in data


def test_locomo_needs_a_path_and_the_deployment_compiler(tmp_path, tiny_path):
    with pytest.raises(CommandError, match="needs --path"):
        _run("--path", str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="deployment's compiler"):
        _run("--path", str(tiny_path), "--provider", "openai")
    with pytest.raises(CommandError, match="unknown conversations: conv-zz"):
        _run("--path", str(tiny_path), "--conversations", "conv-zz")
    assert Tenant.objects.filter(slug__startswith="promotion-eval-locomo").count() == 0


def test_the_replay_is_not_stopped_by_the_hourly_promotion_budgets(settings, tiny_path):
    # A conversation's sessions are replayed within seconds: the budgets, which bound how fast
    # a client asks, would otherwise refuse the replay's later sessions.
    settings.PROMOTION_BUDGET_PER_HOUR = 0
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 0
    data = _run("--path", str(tiny_path), "--stores", "promoted")
    assert data["promotion"]["jobs"] == {"completed": 1}
    assert data["all"]["promoted"]["memories"] == 2
