"""The confidence gate's PROMOTION_MAX_CANDIDATES cap, and the promotion telemetry events
(skipped, compiled, promoted, superseded) with their exact measurements and metadata, read
from the structured log line every event writes."""

from __future__ import annotations

import json
import logging

import pytest

from apps.extraction.promotion.compiler import session_fingerprint
from apps.extraction.promotion.types import Candidate
from apps.memory.models import Memory, PromotionJob, SessionMemory, SessionPromotion
from apps.memory.services import confidence_gate, promotion_request, promotion_run
from tests.memory.promotion_pipeline.conftest import add_turns, fact

SESSION = "session-1"
#: Distinct facts, far apart for the embedder, each with its own confidence.
FACTS = [
    ("The user deploys with Argo CD.", 0.61),
    ("The team runs Postgres 16 in staging.", 0.99),
    ("The user prefers tabs over spaces.", 0.70),
    ("Standups are at 09:30 Berlin time.", 0.95),
    ("The build uses Bazel.", 0.59),
    ("Invoices are rendered as PDF.", 0.80),
    ("The on-call rotation changes on Mondays.", 0.90),
]


class Events:
    """The promotion events emitted so far, as (event, measurements, metadata)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self.caplog = caplog

    def __call__(self) -> list[tuple[str, dict, dict]]:
        lines = [
            json.loads(record.getMessage())
            for record in self.caplog.records
            if record.name == "engram.telemetry"
        ]
        return [
            (line["event"], line["measurements"], line["metadata"])
            for line in lines
            if line["event"].startswith("memory_promotion.")
        ]

    def clear(self) -> None:
        self.caplog.clear()


@pytest.fixture
def events(caplog):
    caplog.set_level(logging.INFO, logger="engram.telemetry")
    return Events(caplog)


def _promote(tenant, session=SESSION):
    request = promotion_request(tenant=tenant, subject_id="agent-a", session_id=session)
    if request.enqueued:
        promotion_run(job_id=request.job_id)
    return request


def _scope(tenant, session=SESSION, trigger="explicit"):
    return {"tenant_id": str(tenant.pk), "session_id": session, "trigger": trigger}


def test_the_gate_keeps_the_most_confident_up_to_the_cap_in_order(settings):
    settings.PROMOTION_CONFIDENCE_THRESHOLD = 0.6
    settings.PROMOTION_MAX_CANDIDATES = 2
    candidates = [
        Candidate(text="a", confidence=0.7),
        Candidate(text="b", confidence=0.9),
        Candidate(text="c", confidence=0.7),
        Candidate(text="d", confidence=0.5),
    ]

    survivors = confidence_gate(candidates)

    # Ties keep the compiler's order; below the threshold never survives, whatever the cap.
    assert [c.text for c in survivors] == ["b", "a"]
    settings.PROMOTION_MAX_CANDIDATES = 10
    assert [c.text for c in confidence_gate(candidates)] == ["b", "a", "c"]


def test_max_candidates_caps_what_is_promoted_and_compiled_reports_both_counts(
    tenant, promoter, settings, events
):
    # given: seven candidates, six above the threshold, a cap of three
    settings.PROMOTION_MAX_CANDIDATES = 3
    add_turns(tenant, "agent-a", SESSION, "Some facts about our setup.", "Noted.")
    promoter.says(*[fact(text, confidence=confidence) for text, confidence in FACTS])

    # when
    request = _promote(tenant)

    # then: the three most confident, and nothing else
    promoted = set(Memory.objects.filter(tenant=tenant).values_list("text", flat=True))
    assert promoted == {
        "The team runs Postgres 16 in staging.",
        "Standups are at 09:30 Berlin time.",
        "The on-call rotation changes on Mondays.",
    }
    outcome = PromotionJob.objects.get(pk=request.job_id).outcome
    assert (outcome["candidates"], outcome["promoted"]) == (7, 3)
    assert events() == [
        ("memory_promotion.compiled", {"candidates": 7, "survivors": 3}, _scope(tenant)),
        ("memory_promotion.promoted", {"count": 3}, {"tenant_id": str(tenant.pk)}),
    ]


def test_a_paraphrase_emits_promoted_and_superseded_once_each(tenant, promoter, settings, events):
    # given: a first promotion, then the session changes and the model paraphrases it
    settings.PROMOTION_NEAR_DUPLICATE_THRESHOLD = 0.5
    add_turns(tenant, "agent-a", SESSION, "I prefer tabs for indentation", "ok")
    promoter.says(fact("The user prefers tabs for indentation."))
    _promote(tenant)
    add_turns(tenant, "agent-a", SESSION, "yes, tabs for indentation everywhere")
    promoter.says(fact("The user prefers tabs for indentation everywhere."))
    events.clear()

    # when
    _promote(tenant)

    # then
    scope = {"tenant_id": str(tenant.pk)}
    assert events() == [
        ("memory_promotion.compiled", {"candidates": 1, "survivors": 1}, _scope(tenant)),
        ("memory_promotion.promoted", {"count": 1}, scope),
        ("memory_promotion.superseded", {"count": 1}, scope),
    ]
    assert Memory.objects.filter(tenant=tenant, superseded_by__isnull=True).count() == 1


def test_an_unchanged_session_is_skipped_at_the_trigger(tenant, promoter, events):
    add_turns(tenant, "agent-a", SESSION, "I prefer tabs", "ok")
    promoter.says(fact("The user prefers tabs."))
    _promote(tenant)
    events.clear()

    again = _promote(tenant)

    assert (again.enqueued, again.reason) == (False, "unchanged")
    assert events() == [
        ("memory_promotion.skipped", {"count": 1}, {"reason": "unchanged", "at": "trigger"})
    ]


def _queued_job(tenant, session=SESSION):
    return PromotionJob.objects.create(
        tenant=tenant, subject_id="agent-a", session_id=session, trigger="sweep"
    )


@pytest.mark.parametrize(
    ("_case", "reason"),
    [
        ("a session promoted since the job was queued", "unchanged"),
        ("a session with one turn left", "too_few_turns"),
        ("the budget spent by the time the worker runs", "budget_exceeded"),
    ],
)
def test_the_worker_skips_with_its_reason_and_calls_no_model(
    tenant, promoter, settings, events, _case, reason
):
    # given
    add_turns(tenant, "agent-a", SESSION, "I prefer tabs", "ok")
    if reason == "unchanged":
        turns = SessionMemory.objects.filter(tenant=tenant).order_by("seq")
        SessionPromotion.objects.create(
            tenant=tenant,
            subject_id="agent-a",
            session_id=SESSION,
            content_hash=session_fingerprint([(t.role, t.content) for t in turns]),
        )
    elif reason == "too_few_turns":
        SessionMemory.objects.filter(tenant=tenant, content="ok").delete()
    else:
        settings.PROMOTION_BUDGET_PER_HOUR = 0
    job = _queued_job(tenant)

    # when
    status = promotion_run(job_id=job.pk)

    # then
    assert status == ("dropped" if reason == "budget_exceeded" else "skipped")
    assert promoter.calls == []
    assert events() == [
        (
            "memory_promotion.skipped",
            {"count": 1},
            {**_scope(tenant, trigger="sweep"), "reason": reason},
        )
    ]
