"""Rate limits per (tenant, subject), counting items, on writes and on every read by meaning."""

import pytest

from apps.core.exceptions import RateLimited
from apps.core.rate_limits import RateCharge, enforce_rate_limit
from apps.knowledge.models import Article
from apps.memory.models import Memory
from apps.tenancy.models import ApiKeyRole
from tests.memory.factories import memory_row

MEMORY = "/api/v1/memory"
BATCH = "/api/v1/memory/batch"
GRADUATE = "/api/v1/memory/graduate"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def test_rotating_keys_of_one_agent_share_a_bucket(agent, make_caller, tenant, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    rotated = make_caller(tenant, ApiKeyRole.AGENT, agent_id="agent-a")
    assert agent.post(MEMORY, {"text": "1"}).status_code == 201

    response = rotated.post(MEMORY, {"text": "2"})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(response["Retry-After"]) <= 61
    assert Memory.objects.count() == 1


def test_other_subjects_and_tenants_have_their_own_buckets(
    agent, other_agent, foreign_agent, settings
):
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    assert agent.post(MEMORY, {"text": "1"}).status_code == 201

    assert other_agent.post(MEMORY, {"text": "2"}).status_code == 201
    assert foreign_agent.post(MEMORY, {"text": "3"}).status_code == 201
    assert agent.post(MEMORY, {"text": "4"}).status_code == 429


def test_a_500_item_batch_counts_500(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 500
    # Windows are fixed; a day-long one keeps a window boundary out of this multi-second test.
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400
    batch = agent.post(BATCH, {"items": [{"text": f"t{i}"} for i in range(500)]})

    response = agent.post(MEMORY, {"text": "one more"})

    assert batch.status_code == 201
    assert response.status_code == 429
    assert Memory.objects.count() == 500


def test_a_batch_over_what_is_left_is_refused_whole_and_not_charged(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 10
    assert agent.post(BATCH, {"items": [{"text": f"t{i}"} for i in range(6)]}).status_code == 201

    refused = agent.post(BATCH, {"items": [{"text": f"u{i}"} for i in range(5)]})
    fits = agent.post(BATCH, {"items": [{"text": f"v{i}"} for i in range(4)]})

    assert refused.status_code == 429
    assert fits.status_code == 201
    assert Memory.objects.count() == 10


@pytest.mark.parametrize(
    ("_case", "items"),
    [("not_a_list", "t0"), ("empty", []), ("over_the_batch_maximum", [{"text": "t"}] * 501)],
)
def test_a_batch_validation_refuses_counts_as_one_request(agent, settings, _case, items):
    settings.MEMORY_WRITE_RATE_LIMIT = 2
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400

    refused = agent.post(BATCH, {"items": items})
    fits = agent.post(MEMORY, {"text": "one"})
    over = agent.post(MEMORY, {"text": "two"})

    assert refused.status_code == 422
    assert (fits.status_code, over.status_code) == (201, 429)
    assert Memory.objects.count() == 1


def test_a_batch_is_charged_before_its_items_are_validated(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 3
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400

    invalid = agent.post(BATCH, {"items": [{"text": "ok"}, {"text": "   "}]})
    fits = agent.post(MEMORY, {"text": "one"})
    over = agent.post(MEMORY, {"text": "two"})

    assert invalid.status_code == 422
    assert (fits.status_code, over.status_code) == (201, 429)
    assert Memory.objects.count() == 1


def test_graduation_is_charged_to_the_embedding_write_bucket(agent, tenant, settings):
    settings.EMBEDDING_WRITE_RATE_LIMIT = 1
    settings.EMBEDDING_WRITE_RATE_WINDOW_SECONDS = 86_400
    first = memory_row(tenant, "agent-a", "Deploys are frozen after 14:00 UTC on Fridays.")
    second = memory_row(tenant, "agent-a", "The staging database runs PostgreSQL 18.")
    assert agent.post(GRADUATE, {"memory_id": str(first.pk)}).status_code == 201

    response = agent.post(GRADUATE, {"memory_id": str(second.pk)})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert response.json()["error"]["details"]["bucket"] == "embedding-write"
    assert Article.objects.count() == 1
    assert agent.post(MEMORY, {"text": "Memory writes have their own bucket."}).status_code == 201


def test_a_replayed_write_counts_like_the_first_attempt(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 2
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400
    first = agent.post(MEMORY, {"text": "1"}, HTTP_IDEMPOTENCY_KEY="k-1")
    replay = agent.post(MEMORY, {"text": "1"}, HTTP_IDEMPOTENCY_KEY="k-1")

    refused_retry = agent.post(MEMORY, {"text": "1"}, HTTP_IDEMPOTENCY_KEY="k-1")

    assert (first.status_code, replay.status_code) == (201, 201)
    assert replay["Idempotent-Replayed"] == "true"
    assert refused_retry.status_code == 429
    assert Memory.objects.count() == 1


def test_forgetting_is_not_charged_to_the_memory_write_bucket(agent, settings):
    settings.MEMORY_WRITE_RATE_LIMIT = 1
    settings.MEMORY_WRITE_RATE_WINDOW_SECONDS = 86_400
    written = agent.post(MEMORY, {"text": "1"})
    assert agent.post(MEMORY, {"text": "2"}).status_code == 429

    response = agent.delete(f"{MEMORY}/{written.json()['data']['id']}")

    assert response.status_code == 204
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    "path",
    ["/api/v1/memory/recall", "/api/v1/recall", "/api/v1/knowledge/search"],
)
def test_reads_by_meaning_share_one_bucket_and_answer_429(
    agent, make_caller, tenant, settings, path
):
    settings.RECALL_RATE_LIMIT = 2
    # Windows are fixed; a day-long one keeps a window boundary out of this test.
    settings.RECALL_RATE_WINDOW_SECONDS = 86_400
    rotated = make_caller(tenant, ApiKeyRole.AGENT, agent_id="agent-a")
    assert agent.post("/api/v1/memory/recall", {"query": "tea"}).status_code == 200
    assert rotated.post("/api/v1/knowledge/search", {"query": "tea"}).status_code == 200

    response = agent.post(path, {"query": "tea"})

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert int(response["Retry-After"]) >= 1


def test_the_limit_is_counted_through_the_shared_cache(settings):
    # Two "processes" are two calls that share nothing but the cache.
    def charge(cost: int, now: float) -> None:
        enforce_rate_limit(RateCharge(bucket="b", limit=3, window_seconds=60, cost=cost, now=now))

    charge(2, now=1_000.0)
    charge(1, now=1_001.0)

    with pytest.raises(RateLimited) as excinfo:
        charge(1, now=1_002.0)

    assert excinfo.value.headers == {"Retry-After": "19"}
    charge(3, now=1_021.0)  # the next window starts at nothing
    with pytest.raises(RateLimited):
        charge(1, now=1_022.0)
