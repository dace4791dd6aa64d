"""US-29.6 through the HTTP surface: promote, recall, isolation, budget, halt."""

import threading

import pytest
from django.db import connection

from apps.memory.models import Memory, PromotionJob
from apps.memory.services import promotion_request, promotion_run, promotion_sweep
from apps.memory.tasks import promote_session_task
from apps.tenancy.services import tenant_halt
from tests.memory.promotion_pipeline.conftest import add_turns, fact

PROMOTE = "/api/v1/memory/promote"


@pytest.fixture
def run_enqueued_jobs(mocker):
    """Capture on-commit enqueues and run them the way the worker would."""
    delay = mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")

    def run():
        for call in delay.call_args_list:
            promote_session_task.apply(args=call.args).get()
        delay.reset_mock()

    return run


def _write_session(caller, session_id, *contents):
    for index, content in enumerate(contents):
        caller.post(
            "/api/v1/memory",
            {
                "tier": "session",
                "session_id": session_id,
                "content": content,
                "role": "user" if index % 2 == 0 else "assistant",
                "ttl_seconds": 3600,
            },
        )


def test_promote_via_api_then_recall_via_api_and_context(
    agent, tenant, promoter, run_enqueued_jobs, django_capture_on_commit_callbacks
):
    _write_session(agent, "s1", "We decided to ship on Tuesdays", "Got it")
    promoter.says(fact("The team ships on Tuesdays.", confidence=0.77, kind="decision"))

    with django_capture_on_commit_callbacks(execute=True):
        response = agent.post(PROMOTE, {"session_id": "s1"})
    run_enqueued_jobs()
    recalled = agent.post("/api/v1/memory/recall", {"query": "which day do we ship"}).json()

    body = response.json()["data"]
    assert response.status_code == 202
    assert (body["enqueued"], body["reason"], body["session_id"]) == (True, "enqueued", "s1")
    hit = recalled["data"][0]["memory"]
    assert (hit["source"], hit["source_session_id"], hit["confidence"]) == (
        "promoted",
        "s1",
        pytest.approx(0.77),
    )


def test_promoted_memory_is_invisible_to_other_tenants_and_subjects(
    agent, other_agent, foreign_agent, tenant, promoter
):
    add_turns(tenant, "agent-a", "s1", "I prefer tabs", "ok")
    promoter.says(fact("The user prefers tabs."))
    promotion_run(
        job_id=promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1").job_id
    )
    promoted = Memory.objects.get(source="promoted")

    for intruder in (other_agent, foreign_agent):
        recalled = intruder.post("/api/v1/memory/recall", {"query": "prefers tabs"}).json()
        listed = intruder.get("/api/v1/memory?source=promoted").json()
        forgotten = intruder.delete(f"/api/v1/memory/{promoted.pk}")
        promoted_again = intruder.post(PROMOTE, {"session_id": "s1"}).json()
        assert recalled["data"] == []
        assert listed["data"] == []
        assert forgotten.status_code == 404
        assert promoted_again["data"]["reason"] == "too_few_turns"
    assert Memory.objects.filter(pk=promoted.pk).exists()


def test_rerunning_explicit_and_sweep_adds_no_rows_including_superseded(
    agent, tenant, promoter, settings, run_enqueued_jobs, django_capture_on_commit_callbacks
):
    settings.PROMOTION_SWEEP_IDLE_SECONDS = 0
    _write_session(agent, "s1", "I prefer tabs", "ok", "and I use vim", "noted")
    promoter.says(fact("The user prefers tabs."), fact("The user uses vim."))
    with django_capture_on_commit_callbacks(execute=True):
        agent.post(PROMOTE, {"session_id": "s1"})
    run_enqueued_jobs()
    before = Memory.objects.filter(tenant=tenant).count()  # includes superseded rows

    with django_capture_on_commit_callbacks(execute=True):
        again = agent.post(PROMOTE, {"session_id": "s1"}).json()["data"]
        swept = promotion_sweep()
    run_enqueued_jobs()

    assert before == 2
    assert again["reason"] == "unchanged"
    assert swept.enqueued == 0
    assert Memory.objects.filter(tenant=tenant).count() == before
    assert len(promoter.calls) == 1


def test_over_budget_promote_is_429_and_the_llm_sees_no_call(agent, tenant, promoter, settings):
    settings.PROMOTION_BUDGET_PER_HOUR = 0
    _write_session(agent, "s1", "I prefer tabs", "ok")

    response = agent.post(PROMOTE, {"session_id": "s1"})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "budget_exceeded"
    assert "Retry-After" in response
    assert promoter.calls == []
    assert PromotionJob.objects.count() == 0


@pytest.mark.parametrize(
    ("_case", "body"),
    [
        ("missing", {}),
        ("number", {"session_id": 7}),
        ("blank", {"session_id": " "}),
        ("too_long", {"session_id": "x" * 201}),
    ],
)
def test_promote_validates_session_id(agent, _case, body):
    response = agent.post(PROMOTE, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] in {"invalid_session_id", "validation_error"}
    assert PromotionJob.objects.count() == 0


def test_promote_is_frozen_by_a_custody_halt_for_agents(agent, tenant, promoter):
    _write_session(agent, "s1", "I prefer tabs", "ok")
    tenant_halt(tenant=tenant)

    response = agent.post(PROMOTE, {"session_id": "s1"})

    assert response.status_code == 423
    assert PromotionJob.objects.count() == 0


def test_promote_requires_a_key(anonymous, db):
    assert anonymous.post(PROMOTE, {"session_id": "s1"}, format="json").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_concurrent_triggers_never_overshoot_the_budget(tenant, settings, mocker):
    settings.PROMOTION_BUDGET_PER_HOUR = 3
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    sessions = [f"s{i}" for i in range(12)]
    for session in sessions:
        add_turns(tenant, "agent-a", session, "turn one", "turn two")
    start = threading.Barrier(len(sessions))
    outcomes: list[str] = []
    lock = threading.Lock()

    def trigger(session_id):
        try:
            start.wait()
            result = promotion_request(tenant=tenant, subject_id="agent-a", session_id=session_id)
            outcome = result.reason
        except Exception as exc:
            outcome = getattr(exc, "code", type(exc).__name__)
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=trigger, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count("enqueued") == 3
    assert outcomes.count("budget_exceeded") == 9
    assert PromotionJob.objects.filter(tenant=tenant).count() == 3
