"""The Idempotency-Key header on writes: replay, reuse, scope, failure, concurrency, pruning."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from apps.core.db.routers import PRIMARY
from apps.core.db.transactions import unit_of_work, write_transaction
from apps.memory.models import Memory
from apps.tenancy.api_base import TenantApi
from apps.tenancy.exceptions import IdempotencyKeyInProgress
from apps.tenancy.idempotency import (
    IdempotencyClaim,
    IdempotencyReplay,
    idempotency_claim,
    idempotency_complete,
    idempotency_prune_expired,
)
from apps.tenancy.models import IdempotencyRecord
from apps.tenancy.tasks import prune_idempotency_records_task
from tests.database_faults import terminate_this_connection

MEMORY = "/api/v1/memory"
BATCH = "/api/v1/memory/batch"
WRITE_METHODS = ("post", "patch", "put", "delete")
#: POST endpoints that only read (recall and search), so a retry is already harmless.
READ_ONLY_POSTS = {"memory_recall", "recall_context", "knowledge_search", "knowledge_context"}


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _write(caller, body, key):
    return caller.post(MEMORY, body, HTTP_IDEMPOTENCY_KEY=key)


def test_a_repeat_with_the_same_key_and_body_replays_the_first_response(agent):
    first = _write(agent, {"text": "Prefers tabs"}, "key-1")
    again = _write(agent, {"text": "Prefers tabs"}, "key-1")

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert (first["Idempotent-Replayed"], again["Idempotent-Replayed"]) == ("false", "true")
    assert list(Memory.objects.values_list("text", flat=True)) == ["Prefers tabs"]
    assert IdempotencyRecord.objects.get().status_code == 201


def test_the_same_key_with_another_body_is_refused_and_writes_nothing(agent):
    _write(agent, {"text": "Prefers tabs"}, "key-1")

    other = _write(agent, {"text": "Prefers spaces"}, "key-1")
    other_path = agent.post(
        BATCH, {"items": [{"text": "Prefers tabs"}]}, HTTP_IDEMPOTENCY_KEY="key-1"
    )

    assert (other.status_code, other.json()["error"]["code"]) == (422, "idempotency_key_reused")
    assert other_path.json()["error"]["code"] == "idempotency_key_reused"
    assert list(Memory.objects.values_list("text", flat=True)) == ["Prefers tabs"]


def test_writes_without_a_key_are_not_deduplicated(agent):
    agent.post(MEMORY, {"text": "Prefers tabs"})
    agent.post(MEMORY, {"text": "Prefers tabs"})

    assert Memory.objects.count() == 2
    assert IdempotencyRecord.objects.count() == 0


def test_keys_are_scoped_to_the_subject_and_the_tenant(agent, other_agent, foreign_agent):
    responses = [
        _write(caller, {"text": "Prefers tabs"}, "shared-key")
        for caller in (agent, other_agent, foreign_agent)
    ]

    assert [response.status_code for response in responses] == [201, 201, 201]
    assert [response["Idempotent-Replayed"] for response in responses] == ["false"] * 3
    assert sorted(Memory.objects.values_list("subject_id", flat=True)) == [
        "agent-a",
        "agent-a",
        "agent-b",
    ]


def test_a_failed_request_does_not_keep_the_key(agent):
    failed = _write(agent, {"text": ""}, "key-1")
    assert IdempotencyRecord.objects.count() == 0

    retried = _write(agent, {"text": ""}, "key-1")
    fixed = _write(agent, {"text": "Prefers tabs"}, "key-1")

    assert (failed.status_code, retried.status_code, fixed.status_code) == (422, 422, 201)
    assert Memory.objects.count() == 1


@pytest.mark.parametrize(
    ("_case", "key"),
    [("too_long", "k" * 256), ("space_inside", "a key"), ("non_ascii", "ключ")],
)
def test_a_malformed_key_is_refused_before_any_write(agent, _case, key):
    response = agent.post(MEMORY, {"text": "Prefers tabs"}, HTTP_IDEMPOTENCY_KEY=key)

    assert (response.status_code, response.json()["error"]["code"]) == (
        422,
        "invalid_idempotency_key",
    )
    assert Memory.objects.count() == 0
    assert IdempotencyRecord.objects.count() == 0


def test_a_delete_is_replayed_as_its_204(agent):
    memory_id = agent.post(MEMORY, {"text": "Prefers tabs"}).json()["data"]["id"]

    first = agent.delete(f"{MEMORY}/{memory_id}", HTTP_IDEMPOTENCY_KEY="forget-1")
    again = agent.delete(f"{MEMORY}/{memory_id}", HTTP_IDEMPOTENCY_KEY="forget-1")
    unkeyed = agent.delete(f"{MEMORY}/{memory_id}")

    assert (first.status_code, again.status_code, unkeyed.status_code) == (204, 204, 404)
    assert again["Idempotent-Replayed"] == "true"


def test_a_key_in_flight_is_in_progress_then_taken_over_after_the_lease(tenant, settings):
    now = timezone.now()
    claim = idempotency_claim(
        tenant=tenant, subject_id="agent-a", key="k", fingerprint="f1", now=now
    )
    assert isinstance(claim, IdempotencyClaim)

    with pytest.raises(IdempotencyKeyInProgress, match="still in progress") as in_progress:
        idempotency_claim(tenant=tenant, subject_id="agent-a", key="k", fingerprint="f1", now=now)
    later = now + timedelta(seconds=settings.IDEMPOTENCY_LEASE_SECONDS + 1)
    takeover = idempotency_claim(
        tenant=tenant, subject_id="agent-a", key="k", fingerprint="f1", now=later
    )
    # The abandoned claimant finishing late must not overwrite the new owner's record.
    idempotency_complete(tenant=tenant, claim=claim, status_code=201, body={"late": True})

    assert in_progress.value.code == "idempotency_key_in_progress"
    assert in_progress.value.headers == {"Retry-After": "1"}
    assert isinstance(takeover, IdempotencyClaim)
    assert takeover.claim_token != claim.claim_token
    assert IdempotencyRecord.objects.get().status_code is None


def test_a_response_is_replayed_for_24_hours_and_then_the_key_runs_again(tenant, settings):
    now = timezone.now()
    claim = idempotency_claim(tenant=tenant, subject_id="s", key="k", fingerprint="f1", now=now)
    idempotency_complete(tenant=tenant, claim=claim, status_code=201, body={"data": 1})
    ttl = timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)

    within = idempotency_claim(
        tenant=tenant,
        subject_id="s",
        key="k",
        fingerprint="f1",
        now=now + ttl - timedelta(seconds=1),
    )
    after = idempotency_claim(
        tenant=tenant, subject_id="s", key="k", fingerprint="f2", now=now + ttl
    )

    assert within == IdempotencyReplay(status_code=201, body={"data": 1})
    assert isinstance(after, IdempotencyClaim)
    assert IdempotencyRecord.objects.get().fingerprint == "f2"


def test_records_past_the_window_are_pruned(tenant, settings):
    now = timezone.now()
    ttl = timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    old = idempotency_claim(
        tenant=tenant,
        subject_id="s",
        key="old",
        fingerprint="f",
        now=now - ttl - timedelta(seconds=1),
    )
    fresh = idempotency_claim(
        tenant=tenant,
        subject_id="s",
        key="fresh",
        fingerprint="f",
        now=now - ttl + timedelta(seconds=60),
    )

    prune_idempotency_records_task()

    assert isinstance(old, IdempotencyClaim)
    assert list(IdempotencyRecord.objects.values_list("pk", flat=True)) == [fresh.record_id]
    assert idempotency_prune_expired() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_write_once(make_caller, tenant, settings):
    # All four duplicates in flight at once: the idempotency record, not the in-flight cap,
    # must be what lets one of them write.
    settings.SUBJECT_MAX_IN_FLIGHT = 4
    caller = make_caller(tenant, agent_id="agent-a")
    raw_key = caller.issued.raw_key
    barrier = threading.Barrier(4)
    responses = []

    def send():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
        barrier.wait()
        try:
            responses.append(
                client.post(
                    MEMORY,
                    {"text": "Prefers tabs"},
                    format="json",
                    HTTP_IDEMPOTENCY_KEY="race",
                )
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    first_runs = [
        r for r in responses if r.status_code == 201 and r["Idempotent-Replayed"] == "false"
    ]
    others = {(r.status_code, r.json().get("error", {}).get("code")) for r in responses} - {
        (201, None)
    }
    assert len(responses) == 4
    assert len(first_runs) == 1
    assert others <= {(409, "idempotency_key_in_progress")}
    assert Memory.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_connection_lost_before_the_commit_writes_nothing_and_frees_the_key(agent, mocker):
    def lose_the_connection_then_complete(**kwargs):
        # The memory's INSERT has run on this connection; the database drops it now.
        terminate_this_connection()
        idempotency_complete(**kwargs)

    mocker.patch(
        "apps.tenancy.api_base.idempotency_complete", side_effect=lose_the_connection_then_complete
    )
    try:
        lost = _write(agent, {"text": "Prefers tabs"}, "key-1")
    finally:
        connection.close()  # the next query opens a fresh session
    mocker.stopall()

    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "database_unavailable")
    assert Memory.objects.count() == 0
    assert IdempotencyRecord.objects.count() == 0
    retried = _write(agent, {"text": "Prefers tabs"}, "key-1")
    assert (retried.status_code, retried["Idempotent-Replayed"]) == (201, "false")
    assert list(Memory.objects.values_list("text", flat=True)) == ["Prefers tabs"]


@pytest.mark.django_db(transaction=True)
def test_a_failed_commit_keeps_the_key_until_its_lease_and_the_retry_writes_once(
    agent, mocker, settings
):
    def complete_then_lose_the_connection(**kwargs):
        # Write and response are both in the transaction; the database drops before COMMIT,
        # which from here looks the same as a COMMIT whose answer was lost.
        idempotency_complete(**kwargs)
        terminate_this_connection()

    mocker.patch(
        "apps.tenancy.api_base.idempotency_complete", side_effect=complete_then_lose_the_connection
    )
    try:
        lost = _write(agent, {"text": "Prefers tabs"}, "key-1")
    finally:
        connection.close()
    mocker.stopall()

    assert (lost.status_code, lost.json()["error"]["code"]) == (503, "database_unavailable")
    assert Memory.objects.count() == 0
    assert IdempotencyRecord.objects.get().status_code is None  # the claim is kept
    assert _write(agent, {"text": "Prefers tabs"}, "key-1").status_code == 409

    settings.IDEMPOTENCY_LEASE_SECONDS = 0  # the lost request's lease has run out
    retried = _write(agent, {"text": "Prefers tabs"}, "key-1")
    replayed = _write(agent, {"text": "Prefers tabs"}, "key-1")

    assert (retried.status_code, retried["Idempotent-Replayed"]) == (201, "false")
    assert (replayed.status_code, replayed["Idempotent-Replayed"]) == (201, "true")
    assert list(Memory.objects.values_list("text", flat=True)) == ["Prefers tabs"]


def test_a_service_transaction_is_durable_except_inside_a_unit_of_work(db):
    with (
        transaction.atomic(using=PRIMARY),
        pytest.raises(RuntimeError, match="durable"),
        write_transaction(),
    ):
        pass

    with unit_of_work(), write_transaction():
        assert connection.in_atomic_block


# ----------------------------------------------------------------------------- coverage


def _tenant_views(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _tenant_views(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "view_class", None)
            if view is not None and issubclass(view, TenantApi):
                yield prefix + str(pattern.pattern), view


def test_every_write_method_honours_the_key_and_documents_it():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation_ids = {
        (path, method): operation["operationId"]
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }
    documented = {
        operation["operationId"]
        for operations in schema["paths"].values()
        for operation in operations.values()
        if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
    }
    wrapped: set[tuple[str, str]] = set()
    unwrapped: set[tuple[str, str]] = set()
    for route, view in _tenant_views(get_resolver().url_patterns):
        for method in WRITE_METHODS:
            handler = getattr(view, method, None)
            if handler is None:
                continue
            target = wrapped if getattr(handler, "idempotent", False) else unwrapped
            target.add((route, method))
    write_ids = {
        op for (path, method), op in operation_ids.items() if method in WRITE_METHODS
    } - READ_ONLY_POSTS

    # Every write route is wrapped except the four POSTs that only read.
    assert ("api/v1/memory", "post") in wrapped
    assert ("api/v1/memory/erase", "post") in wrapped
    assert unwrapped == {
        ("api/v1/memory/recall", "post"),
        ("api/v1/recall", "post"),
        ("api/v1/knowledge/search", "post"),
        ("api/v1/knowledge/context", "post"),
    }
    assert documented == write_ids
