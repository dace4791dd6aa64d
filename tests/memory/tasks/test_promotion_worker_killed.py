"""A worker SIGKILLed in the middle of a promotion job does not wedge the session.

A real `celery worker` process claims the job and hangs in the compiler's LLM call; it is
killed with SIGKILL (no ack, no clean-up). The job stays `running` under its lease; once the
lease is over the sweep re-queues it, and a fresh worker runs it to completion.
"""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memory.models import Memory, PromotionJob
from apps.memory.services import promotion_request, promotion_sweep
from tests.memory.promotion_pipeline.conftest import CHAT_PATH, add_turns, fact
from tests.memory.tasks.worker_process import (
    kill_worker,
    producer,
    purge_queue,
    redis_answers,
    start_worker,
    stop_worker,
)
from tests.providers.fake_http import FakeResponse, openai_chat_payload

TIMEOUT_S = 90


def _wait_for(predicate, worker, what):
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if predicate():
            return
        assert worker.poll() is None, f"the worker exited before {what}"
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_was_killed_is_requeued_and_completed(tenant, fake_http, settings):
    if not redis_answers():
        pytest.fail("Redis is not answering on 127.0.0.1:6379 (.ci/run starts it)")
    purge_queue()
    tenant.llm_provider = "openai"
    tenant.llm_config = {"base_url": fake_http.url("/v1"), "model": "fake-model"}
    tenant.save()
    add_turns(tenant, "agent-a", "s1", "I deploy with Argo CD", "Noted.")
    payload = openai_chat_payload(
        json.dumps({"memories": [fact("The user deploys with Argo CD.")]})
    )
    fake_http.respond("POST", CHAT_PATH, FakeResponse(json_body=payload, delay_seconds=60))
    job_id = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1").job_id
    assert job_id is not None

    worker = start_worker(ENGRAM_PROVIDER_TIMEOUT_SECONDS="120")
    try:
        producer().send_task("memory.promote_session", args=[str(job_id)])
        _wait_for(lambda: len(fake_http.requests_to(CHAT_PATH)) == 1, worker, "the LLM call")
        kill_worker(worker)
    finally:
        stop_worker(worker)
    killed = PromotionJob.objects.get(pk=job_id)
    assert (killed.status, killed.attempts) == ("running", 1)
    blocked = promotion_request(tenant=tenant, subject_id="agent-a", session_id="s1")
    assert (blocked.reason, PromotionJob.objects.get(pk=job_id).status) == (
        "already_queued",
        "running",
    )

    swept = promotion_sweep(
        now=timezone.now() + timedelta(seconds=settings.PROMOTION_JOB_LEASE_SECONDS + 1)
    )
    assert (swept.requeued, PromotionJob.objects.get(pk=job_id).status) == (1, "queued")

    fake_http.respond_json("POST", CHAT_PATH, payload)
    worker = start_worker()
    try:
        # The reaper's own message went to this process's broker; hand it to the real one.
        producer().send_task("memory.promote_session", args=[str(job_id)])
        _wait_for(
            lambda: PromotionJob.objects.get(pk=job_id).status == "completed",
            worker,
            "the re-queued job to complete",
        )
    finally:
        stop_worker(worker)
        purge_queue()
    done = PromotionJob.objects.get(pk=job_id)
    assert done.attempts == 2
    assert list(Memory.objects.filter(tenant=tenant).values_list("text", flat=True)) == [
        "The user deploys with Argo CD."
    ]
