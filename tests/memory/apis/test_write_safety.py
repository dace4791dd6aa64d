"""Writes are all-or-nothing across both tiers, and a broker outage never fails a committed
write."""

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.knowledge.models import Article
from apps.memory.models import Memory, SessionMemory
from apps.memory.services import memory_backfill_embeddings
from config.celery import app as celery_app

MEMORY = "/api/v1/memory"
BATCH = "/api/v1/memory/batch"
UNREACHABLE_BROKER = "redis://127.0.0.1:1/0"


@pytest.fixture
def enqueue(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


@pytest.mark.parametrize(
    ("_case", "turn", "code"),
    [
        (
            "content_too_large",
            {"session_id": "s", "ttl_seconds": 60, "content": "x" * 102_401},
            "content_too_large",
        ),
        (
            "expired",
            {"session_id": "s", "expires_at": (timezone.now() - timedelta(hours=1)).isoformat()},
            "invalid_expires_at",
        ),
    ],
)
def test_a_valid_memory_and_an_invalid_session_item_write_nothing(
    agent, enqueue, _case, turn, code
):
    items = [{"text": "a valid memory"}, {"tier": "session", "content": "turn"} | turn]

    response = agent.post(BATCH, {"items": items})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert Memory.objects.count() == 0
    assert SessionMemory.objects.count() == 0
    enqueue.assert_not_called()


def test_both_tiers_commit_in_one_transaction(agent, enqueue, mocker):
    # The session insert failing after the memories were inserted must take them back out.
    mocker.patch(
        "apps.memory.services.batch.session_append_many",
        side_effect=DatabaseError("the session insert failed"),
    )
    turn = {"tier": "session", "session_id": "s", "content": "c", "ttl_seconds": 60}
    items = [{"text": "a valid memory"}, turn]

    response = agent.post(BATCH, {"items": items})

    assert response.status_code == 500
    assert Memory.objects.count() == 0
    enqueue.assert_not_called()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "item",
    [
        {"text": "one memory"},
        {"tier": "session", "session_id": "s", "content": "c", "ttl_seconds": 60},
    ],
)
def test_a_one_tier_write_is_one_transaction_without_savepoints(agent, enqueue, item):
    # Each savepoint and its release is a round trip per write; one tier needs neither.
    with CaptureQueriesContext(connection) as queries:
        response = agent.post(MEMORY, item)

    assert response.status_code == 201
    statements = [query["sql"].split()[0].upper() for query in queries.captured_queries]
    assert "SAVEPOINT" not in statements
    assert statements.count("BEGIN") == 1
    assert statements.count("COMMIT") == 1


@pytest.fixture
def unreachable_broker() -> Iterator[None]:
    """Point the web process's Celery app at a port nothing listens on."""
    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = UNREACHABLE_BROKER
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    try:
        yield
    finally:
        celery_app.conf.broker_url = previous
        celery_app._pool = None
        celery_app.amqp._producer_pool = None


@pytest.mark.django_db(transaction=True)
def test_a_broker_outage_returns_the_committed_memory_and_the_backfill_embeds_it(
    agent, unreachable_broker, caplog
):
    single = agent.post(MEMORY, {"text": "written while the broker is down"})
    batch = agent.post(BATCH, {"items": [{"text": "batch one"}, {"text": "batch two"}]})

    assert single.status_code == 201
    assert batch.status_code == 201
    assert Memory.objects.filter(embedded_at__isnull=True).count() == 3
    assert "on_commit" in caplog.text  # the failed enqueue is logged, not raised

    run = memory_backfill_embeddings()

    assert run.embedded == 3
    assert Memory.objects.filter(embedded_at__isnull=True).count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_broker_outage_returns_the_committed_article(user, unreachable_broker):
    response = user.post(
        "/api/v1/knowledge/articles",
        {"title": "Broker down", "body": "Still written.", "category": "finding"},
    )

    assert response.status_code == 201
    assert Article.objects.filter(embedded_at__isnull=True).count() == 1
