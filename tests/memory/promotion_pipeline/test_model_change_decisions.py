"""Where a compiler model is configured it decides which promoted statements change a stored
fact, in place of the offline rules, under the same precedence: the later fact wins, a
promoted statement never retires an explicit memory, a contradiction flags both, and an
unreachable or unreadable model leaves the decision to the rules. The model is only ever shown
the subject's own memories, and can only name what it was shown."""

from datetime import UTC, datetime

import pytest

from apps.memory.models import Memory
from apps.memory.services import MemoryDraft, memory_remember
from tests.memory.promotion_pipeline.conftest import CHAT_PATH, add_turns, fact
from tests.memory.promotion_pipeline.test_promotion_pipeline import _promote
from tests.providers.fake_http import FakeResponse

pytestmark = pytest.mark.django_db

NURSE = "The user works as a nurse at St. Luke's hospital."
ANALYST = "The user works as a data analyst at Globex."
JANUARY = datetime(2025, 1, 10, tzinfo=UTC)
MAY = datetime(2025, 5, 20, tzinfo=UTC)
UPDATES = {"new": "N1", "existing": "E1", "relation": "updates"}


def _promoted_nurse(tenant, promoter, subject="agent-a"):
    add_turns(
        tenant, subject, "january", "I'm a nurse at St. Luke's.", "Noted.", occurred_at=JANUARY
    )
    promoter.says(fact(NURSE))
    _promote(tenant, subject=subject, session="january")
    return Memory.objects.get(tenant=tenant, subject_id=subject, text=NURSE)


def _promote_the_new_job(tenant, promoter, changes=None, *, decision=None):
    add_turns(
        tenant,
        "agent-a",
        "may",
        "I now work as a data analyst at Globex.",
        "Congrats!",
        occurred_at=MAY,
    )
    promoter.says_then_decides([fact(ANALYST)], changes, decision=decision)
    _promote(tenant, session="may")
    return Memory.objects.get(tenant=tenant, subject_id="agent-a", text=ANALYST)


def test_the_model_retires_the_fact_it_says_the_new_statement_updates(tenant, promoter):
    nurse = _promoted_nurse(tenant, promoter)

    analyst = _promote_the_new_job(tenant, promoter, [UPDATES])

    nurse.refresh_from_db()
    assert nurse.superseded_by_id == analyst.pk
    assert nurse.valid_to == analyst.valid_from
    assert (analyst.supersedes, analyst.supersede_reason) == ([nurse.pk], "changed_value:model")
    decision_call = promoter.calls[-1].body["messages"]
    shown = decision_call[-1]["content"]
    assert NURSE in shown
    assert ANALYST in shown
    assert shown.startswith("<existing>")
    assert "</new>" in shown


def test_what_the_model_leaves_alone_stays_live_though_a_rule_would_retire_it(
    tenant, promoter, settings
):
    nurse = _promoted_nurse(tenant, promoter)

    _promote_the_new_job(tenant, promoter, [])

    nurse.refresh_from_db()
    assert nurse.superseded_by_id is None


def test_with_the_switch_off_the_rules_decide(tenant, promoter, settings):
    settings.PROMOTION_MODEL_DECIDES_CHANGES = False
    nurse = _promoted_nurse(tenant, promoter)

    analyst = _promote_the_new_job(tenant, promoter, [])

    nurse.refresh_from_db()
    assert nurse.superseded_by_id == analyst.pk
    assert analyst.supersede_reason.startswith("changed_value:")
    assert analyst.supersede_reason != "changed_value:model"
    assert len(promoter.calls) == 2  # one compile each, no decision call


def test_an_unreachable_model_leaves_the_decision_to_the_rules(tenant, promoter):
    nurse = _promoted_nurse(tenant, promoter)

    analyst = _promote_the_new_job(
        tenant, promoter, decision=FakeResponse(status=500, json_body={"error": {"message": "x"}})
    )

    nurse.refresh_from_db()
    assert nurse.superseded_by_id == analyst.pk
    assert analyst.supersede_reason != "changed_value:model"


def test_an_unreadable_reply_leaves_the_decision_to_the_rules(tenant, promoter):
    nurse = _promoted_nurse(tenant, promoter)
    from tests.providers.fake_http import openai_chat_payload

    analyst = _promote_the_new_job(
        tenant, promoter, decision=FakeResponse(json_body=openai_chat_payload("not json"))
    )

    nurse.refresh_from_db()
    assert nurse.superseded_by_id == analyst.pk


def test_a_promoted_statement_never_retires_an_explicit_memory(tenant, promoter):
    explicit = memory_remember(
        tenant=tenant, subject_id="agent-a", draft=MemoryDraft(text=NURSE, occurred_at=JANUARY)
    )

    analyst = _promote_the_new_job(tenant, promoter, [UPDATES])

    explicit.refresh_from_db()
    analyst.refresh_from_db()
    assert explicit.superseded_by_id is None
    assert (explicit.conflicts_with, analyst.conflicts_with) == ([analyst.pk], [explicit.pk])


def test_a_contradiction_flags_both(tenant, promoter):
    nurse = _promoted_nurse(tenant, promoter)

    analyst = _promote_the_new_job(
        tenant, promoter, [{"new": "N1", "existing": "E1", "relation": "contradicts"}]
    )

    nurse.refresh_from_db()
    analyst.refresh_from_db()
    assert nurse.superseded_by_id is None
    assert (nurse.conflicts_with, analyst.conflicts_with) == ([analyst.pk], [nurse.pk])


def test_a_label_the_model_was_not_shown_changes_nothing(tenant, promoter):
    nurse = _promoted_nurse(tenant, promoter)

    _promote_the_new_job(tenant, promoter, [{"new": "N1", "existing": "E7", "relation": "updates"}])

    nurse.refresh_from_db()
    assert nurse.superseded_by_id is None
    assert nurse.conflicts_with == []


def test_the_model_is_shown_only_the_subjects_own_memories(tenant, promoter):
    theirs = _promoted_nurse(tenant, promoter, subject="agent-b")
    memory_remember(
        tenant=tenant,
        subject_id="agent-a",
        draft=MemoryDraft(text="The user works night shifts.", occurred_at=JANUARY),
    )

    _promote_the_new_job(tenant, promoter, [UPDATES])

    shown = promoter.calls[-1].body["messages"][-1]["content"]
    theirs.refresh_from_db()
    assert "night shifts" in shown
    assert NURSE not in shown
    assert theirs.superseded_by_id is None
    assert promoter.calls[-1].path == CHAT_PATH
