"""Filters over HTTP: recall's body, list's query string and merged recall's memory half; a
bad filter is 422 ``invalid_filter`` before anything is read, embedded or recorded. And
``embed_now``: a write whose memory semantic recall finds on the first read."""

import json
from urllib.parse import quote

import pytest

from apps.memory.models import Memory
from apps.memory.recall_bump import wait_for_pending_bumps
from apps.memory.services import memory_embed_pending

MEMORY = "/api/v1/memory"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
BATCH = "/api/v1/memory/batch"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    return mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


@pytest.fixture
def written(agent):
    ids = {}
    for text, tags, metadata in [
        ("the deploy runs on friday", ["ops"], {"kind": "task", "due": "2024-05-03"}),
        ("the deploy was moved", ["ops"], {"kind": "note", "due": "2024-06-01"}),
        ("a deploy of the docs site", ["docs"], {"kind": "task", "due": "2024-07-01"}),
    ]:
        body = agent.post(MEMORY, {"text": text, "tags": tags, "metadata": metadata}).json()
        ids[text] = body["data"]["id"]
    memory_embed_pending(memory_ids=list(ids.values()))
    return ids


def _texts(body):
    return sorted(hit["memory"]["text"] for hit in body["data"])


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_recall_takes_a_filter(agent, written, mode):
    body = agent.post(
        RECALL,
        {
            "query": "deploy",
            "mode": mode,
            "filter": {"tags": "ops", "metadata": {"due": {"$lt": "2024-05-15"}}},
        },
    ).json()

    assert _texts(body) == ["the deploy runs on friday"]


def test_list_takes_a_filter_as_json(agent, written):
    raw = json.dumps({"metadata": {"kind": {"$in": ["task"]}}})
    response = agent.get(f"{MEMORY}?filter={quote(raw)}")

    assert response.status_code == 200
    assert sorted(row["text"] for row in response.json()["data"]) == [
        "a deploy of the docs site",
        "the deploy runs on friday",
    ]
    assert response.json()["meta"]["total_count"] == 2


def test_list_combines_tags_and_filter(agent, written):
    raw = json.dumps({"metadata": {"kind": "task"}})
    response = agent.get(f"{MEMORY}?tags=ops&filter={quote(raw)}")

    assert [row["text"] for row in response.json()["data"]] == ["the deploy runs on friday"]


def test_merged_recall_filters_the_memory_half(agent, written):
    body = agent.post(
        MERGED, {"query": "deploy", "memory_filter": {"metadata": {"kind": "note"}}}
    ).json()

    assert [item["text"] for item in body["data"] if item["source"] == "memory"] == [
        "the deploy was moved"
    ]


@pytest.mark.parametrize(
    ("_case", "body", "path"),
    [
        ("not_an_object", {"query": "deploy", "filter": ["ops"]}, "filter"),
        (
            "unknown_operator",
            {"query": "deploy", "filter": {"metadata": {"a": {"$re": 1}}}},
            "filter.metadata.a.$re",
        ),
        (
            "bool_range",
            {"query": "deploy", "filter": {"metadata": {"a": {"$gt": True}}}},
            "filter.metadata.a.$gt",
        ),
        ("tag_range", {"query": "deploy", "filter": {"tags": {"$lt": "z"}}}, "filter.tags.$lt"),
    ],
)
def test_recall_refuses_a_bad_filter_before_any_side_effect(
    agent, written, mocker, _case, body, path
):
    embed = mocker.patch("apps.memory.selectors.recall.embed_query_soon")

    response = agent.post(RECALL, body)
    wait_for_pending_bumps()

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_filter"
    assert response.json()["error"]["details"]["path"] == path
    embed.assert_not_called()
    assert list(Memory.objects.values_list("recall_count", flat=True)) == [0, 0, 0]


@pytest.mark.parametrize(
    ("_case", "raw"),
    [
        ("not_json", "{tags"),
        ("nul_escape", '{"tags": "a\\u0000"}'),
        ("not_an_object", "[1]"),
        ("bad_operator", '{"tags": {"$gt": "a"}}'),
    ],
)
def test_list_refuses_a_bad_filter(agent, _case, raw):
    response = agent.get(f"{MEMORY}?filter={quote(raw)}")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_filter"


def test_merged_recall_refuses_a_bad_filter(agent):
    response = agent.post(MERGED, {"query": "deploy", "memory_filter": {"oops": 1}})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_filter"


def test_a_filter_never_reaches_another_subject(agent, other_agent, written):
    body = other_agent.post(RECALL, {"query": "deploy", "filter": {"tags": "ops"}}).json()
    listed = other_agent.get(f"{MEMORY}?filter={quote(json.dumps({'tags': 'ops'}))}").json()

    assert body["data"] == []
    assert listed["data"] == []


# ----------------------------------------------------------------------------- embed_now


def test_embed_now_makes_a_write_semantically_findable_at_once(agent):
    # Given a write that shares no word with the query, embedded before it answers
    written = agent.post(MEMORY, {"text": "I love pizza", "embed_now": True}).json()["data"]
    agent.post(MEMORY, {"text": "I am a plumber", "embed_now": True})

    # When recalling by meaning only / Then it is found on the first read
    body = agent.post(RECALL, {"query": "I'm hungry", "mode": "semantic", "limit": 5}).json()

    assert written["embedding_status"] == "ready"
    assert Memory.objects.filter(embedding__isnull=True).count() == 0
    assert written["id"] in [hit["memory"]["id"] for hit in body["data"]]


def test_without_embed_now_a_write_is_pending(agent):
    written = agent.post(MEMORY, {"text": "I love pizza"}).json()["data"]

    assert written["embedding_status"] == "pending"
    assert Memory.objects.filter(embedding__isnull=True).count() == 1


def test_embed_now_in_a_batch_embeds_only_the_items_that_ask(agent):
    response = agent.post(
        BATCH,
        {"items": [{"text": "first", "embed_now": True}, {"text": "second"}]},
    )

    statuses = [item["embedding_status"] for item in response.json()["data"]]
    assert response.status_code == 201
    assert statuses == ["ready", "pending"]


def test_embed_now_on_a_supersede(agent):
    old = agent.post(MEMORY, {"text": "old value"}).json()["data"]

    new = agent.post(
        MEMORY, {"text": "new value", "supersedes": old["id"], "embed_now": True}
    ).json()["data"]

    assert new["embedding_status"] == "ready"
    assert Memory.objects.get(pk=new["id"]).embedding is not None


def test_embed_now_with_the_provider_down_still_writes(agent, tenant):
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()

    response = agent.post(MEMORY, {"text": "I love pizza", "embed_now": True})

    assert response.status_code == 201
    assert response.json()["data"]["embedding_status"] == "pending"
    assert Memory.objects.count() == 1
