"""Each subject's share of the tenant's hourly promotion budget: a noisy agent stops at its
share, and a quiet agent of the same tenant still gets its compiles, under concurrent
triggers too."""

import threading

import pytest
from django.db import connection

from apps.memory.exceptions import BudgetExceeded
from apps.memory.models import PromotionJob
from apps.memory.services import promotion_request, promotion_run, promotion_sweep
from tests.memory.promotion_pipeline.conftest import add_turns, fact

PROMOTE = "/api/v1/memory/promote"


def _jobs(tenant, subject):
    return PromotionJob.objects.filter(tenant=tenant, subject_id=subject).count()


@pytest.mark.django_db
def test_a_subject_past_its_share_is_refused_and_a_quiet_one_is_not(tenant, settings, mocker):
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    settings.PROMOTION_BUDGET_PER_HOUR = 10
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 2
    for subject, session in (("noisy", "s1"), ("noisy", "s2"), ("noisy", "s3"), ("quiet", "q1")):
        add_turns(tenant, subject, session, "turn one", "turn two")
    for session in ("s1", "s2"):
        promotion_request(tenant=tenant, subject_id="noisy", session_id=session)

    with pytest.raises(BudgetExceeded) as refused:
        promotion_request(tenant=tenant, subject_id="noisy", session_id="s3")
    quiet = promotion_request(tenant=tenant, subject_id="quiet", session_id="q1")

    assert refused.value.code == "budget_exceeded"
    assert refused.value.details["scope"] == "subject"
    assert refused.value.details["budget_per_hour"] == 2
    assert 1 <= int(refused.value.headers["Retry-After"]) <= 3601
    assert quiet.enqueued is True
    assert (_jobs(tenant, "noisy"), _jobs(tenant, "quiet")) == (2, 1)


@pytest.mark.django_db
def test_the_tenants_budget_still_bounds_every_subject(tenant, settings, mocker):
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    settings.PROMOTION_BUDGET_PER_HOUR = 2
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 2
    for subject in ("a", "b", "c"):
        add_turns(tenant, subject, "s", "turn one", "turn two")
    promotion_request(tenant=tenant, subject_id="a", session_id="s")
    promotion_request(tenant=tenant, subject_id="b", session_id="s")

    with pytest.raises(BudgetExceeded) as refused:
        promotion_request(tenant=tenant, subject_id="c", session_id="s")

    assert (refused.value.details["scope"], refused.value.details["budget_per_hour"]) == (
        "tenant",
        2,
    )


@pytest.mark.django_db
def test_the_sweep_skips_a_subject_past_its_share(tenant, settings, mocker):
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    settings.PROMOTION_SWEEP_IDLE_SECONDS = 0
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 1
    for subject, session in (("noisy", "s1"), ("noisy", "s2"), ("quiet", "q1")):
        add_turns(tenant, subject, session, "turn one", "turn two")

    swept = promotion_sweep()

    assert (swept.enqueued, swept.reasons.get("budget_exceeded")) == (2, 1)
    assert (_jobs(tenant, "noisy"), _jobs(tenant, "quiet")) == (1, 1)


@pytest.mark.django_db
def test_the_worker_drops_a_job_past_its_subjects_share(tenant, promoter, settings):
    add_turns(tenant, "agent-a", "s1", "I prefer tabs", "ok")
    add_turns(tenant, "agent-a", "s2", "I prefer vim", "ok")
    first = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1")
    second = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s2")
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 1  # lowered after both were reserved
    promoter.says(fact("The user prefers tabs."))

    statuses = [promotion_run(job_id=first.job_id), promotion_run(job_id=second.job_id)]

    assert statuses == ["completed", "dropped"]
    assert len(promoter.calls) == 1


@pytest.mark.django_db
def test_the_api_answers_the_subjects_share_with_429(make_caller, tenant, settings, mocker):
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 1
    noisy = make_caller(tenant, agent_id="noisy")
    quiet = make_caller(tenant, agent_id="quiet")
    for subject, session in (("noisy", "s1"), ("noisy", "s2"), ("quiet", "s1")):
        add_turns(tenant, subject, session, "turn one", "turn two")
    assert noisy.post(PROMOTE, {"session_id": "s1"}).status_code == 202

    refused = noisy.post(PROMOTE, {"session_id": "s2"})

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "budget_exceeded"
    assert refused.json()["error"]["details"]["scope"] == "subject"
    assert quiet.post(PROMOTE, {"session_id": "s1"}).status_code == 202


@pytest.mark.django_db(transaction=True)
def test_concurrent_triggers_leave_the_quiet_subject_its_share(tenant, settings, mocker):
    settings.PROMOTION_BUDGET_PER_HOUR = 10
    settings.PROMOTION_SUBJECT_BUDGET_PER_HOUR = 6
    mocker.patch("apps.memory.queue.PROMOTE_SESSION.delay")
    triggers = [("quiet" if index % 6 == 0 else "noisy", f"s{index}") for index in range(24)]
    for subject, session in triggers:
        add_turns(tenant, subject, session, "turn one", "turn two")
    start = threading.Barrier(len(triggers))
    outcomes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def trigger(subject: str, session: str) -> None:
        try:
            start.wait()
            outcome = promotion_request(tenant=tenant, subject_id=subject, session_id=session)
            result = outcome.reason
        except BudgetExceeded as exc:
            result = f"{exc.details['scope']}_budget_exceeded"
        finally:
            connection.close()
        with lock:
            outcomes.append((subject, result))

    threads = [threading.Thread(target=trigger, args=pair) for pair in triggers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # The noisy agent's 20 triggers stop at its 6; all 4 of the quiet one's fit.
    assert sorted(outcomes).count(("quiet", "enqueued")) == 4
    assert outcomes.count(("noisy", "enqueued")) == 6
    assert outcomes.count(("noisy", "subject_budget_exceeded")) == 14
    assert (_jobs(tenant, "noisy"), _jobs(tenant, "quiet")) == (6, 4)
