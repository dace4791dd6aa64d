"""The input contract: hostile text, sizes, depths and integers are 4xx before any write."""

import io
import json

import pytest
from rest_framework.exceptions import ParseError

from apps.core.api.input import InvalidText, JsonTooDeep
from apps.core.api.parsers import BoundedJSONParser
from apps.core.exceptions import PayloadTooLarge
from apps.knowledge.models import Article
from apps.memory.models import Memory, SessionMemory
from apps.memory.services import memory_embed_pending

MEMORY = "/api/v1/memory"
BATCH = "/api/v1/memory/batch"
RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
SEARCH = "/api/v1/knowledge/search"
ARTICLES = "/api/v1/knowledge/articles"


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


def _raw(caller, path, body: str):
    return caller.client.post(path, body, content_type="application/json")


def _nothing_stored():
    return (Memory.objects.count(), SessionMemory.objects.count(), Article.objects.count())


@pytest.mark.parametrize(
    ("_case", "path", "body"),
    [
        ("surrogate_in_recall_query", RECALL, '{"query": "a\\ud800"}'),
        ("surrogate_in_merged_recall_query", MERGED, '{"query": "a\\udfff b"}'),
        ("surrogate_in_search_query", SEARCH, '{"query": "\\ud800"}'),
        ("nul_in_text", MEMORY, '{"text": "a\\u0000b"}'),
        ("nul_in_metadata_value", MEMORY, '{"text": "t", "metadata": {"k": "v\\u0000"}}'),
        ("nul_in_metadata_key", MEMORY, '{"text": "t", "metadata": {"k\\u0000": 1}}'),
        ("nul_deep_in_metadata", MEMORY, '{"text": "t", "metadata": {"a": [{"b": ["\\u0000"]}]}}'),
        (
            "nul_in_session_id",
            MEMORY,
            '{"tier": "session", "session_id": "s\\u0000", "content": "c", "ttl_seconds": 60}',
        ),
        ("surrogate_in_batch_item", BATCH, '{"items": [{"text": "ok"}, {"text": "\\udabc"}]}'),
        (
            "nul_in_article_title",
            ARTICLES,
            '{"title": "\\u0000", "body": "b", "category": "finding"}',
        ),
    ],
)
def test_nul_and_lone_surrogates_are_422_invalid_text_and_write_nothing(agent, _case, path, body):
    response = _raw(agent, path, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_text"
    assert response.json()["error"]["details"]["location"] == "body"
    assert _nothing_stored() == (0, 0, 0)


def test_a_surrogate_pair_is_ordinary_text(agent):
    response = _raw(agent, MEMORY, '{"text": "emoji \\ud83d\\ude00"}')

    assert response.status_code == 201
    assert Memory.objects.get().text == "emoji \U0001f600"


@pytest.mark.parametrize(
    ("_case", "path"),
    [
        ("nul_in_path_parameter", f"{MEMORY}/sessions/%00"),
        ("nul_in_query_value", f"{MEMORY}?source=%00"),
        ("nul_in_query_name", f"{ARTICLES}?%00=1"),
    ],
)
def test_nul_in_the_url_is_422_invalid_text(agent, _case, path):
    response = agent.get(path)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_text"


def test_json_nested_5000_deep_is_422_json_too_deep(agent):
    body = '{"text": "t", "metadata": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"

    response = _raw(agent, MEMORY, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "json_too_deep"
    assert Memory.objects.count() == 0


def test_json_past_the_depth_bound_is_refused_and_within_it_accepted(agent, settings):
    settings.REQUEST_JSON_MAX_DEPTH = 4
    within = {"text": "t", "metadata": {"a": {"b": {}}}}  # four objects deep
    beyond = {"text": "t", "metadata": {"a": {"b": {"c": []}}}}  # five

    assert agent.post(MEMORY, within).status_code == 201
    response = agent.post(MEMORY, beyond)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "json_too_deep"
    assert Memory.objects.count() == 1


def test_a_20_mb_metadata_value_is_413_before_it_is_read(agent):
    body = json.dumps({"text": "t", "metadata": {"blob": "x" * (20 * 1024 * 1024)}})

    response = _raw(agent, MEMORY, body)

    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": "payload_too_large",
        "message": "The request body is larger than 1048576 bytes.",
        "details": {"max_bytes": 1048576},
    }
    assert Memory.objects.count() == 0


def test_the_body_limit_is_configurable(agent, settings):
    settings.REQUEST_BODY_MAX_BYTES = 200
    small = agent.post(MEMORY, {"text": "x" * 100})
    large = agent.post(MEMORY, {"text": "x" * 200})

    assert small.status_code == 201
    assert large.status_code == 413
    assert Memory.objects.count() == 1


def test_the_parser_bounds_a_body_without_content_length(settings):
    settings.REQUEST_BODY_MAX_BYTES = 10
    parser = BoundedJSONParser()

    with pytest.raises(PayloadTooLarge):
        parser.parse(io.BytesIO(b'{"text": "0123456789"}'))
    assert parser.parse(io.BytesIO(b'{"a": 1}')) == {"a": 1}


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b'{"a": NaN}', ParseError),
        (b'{"a": "\xff"}', ParseError),
        (b'{"a": "\\u0000"}', InvalidText),
        (b"[" * 100_000 + b"]" * 100_000, JsonTooDeep),
    ],
)
def test_the_parser_refuses_what_is_not_clean_json(raw, error):
    with pytest.raises(error):
        BoundedJSONParser().parse(io.BytesIO(raw))


def test_metadata_over_16_kib_serialized_is_422(agent):
    at_limit = {"k": "x" * (16 * 1024 - len('{"k":""}'))}
    over = {"k": "x" * (16 * 1024 - len('{"k":""}') + 1)}

    assert agent.post(MEMORY, {"text": "t", "metadata": at_limit}).status_code == 201
    response = agent.post(MEMORY, {"text": "t2", "metadata": over})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "metadata_too_large"
    assert Memory.objects.count() == 1


@pytest.mark.parametrize(
    "path",
    [
        f"{MEMORY}?offset=99999999999999999999",
        f"{MEMORY}/sessions/s1?offset=99999999999999999999",
        f"{ARTICLES}?offset=99999999999999999999",
        "/api/v1/projects/?offset=99999999999999999999",
        f"{MEMORY}?limit=99999999999999999999",
    ],
)
def test_huge_integers_in_the_query_are_422(user, path):
    response = user.get(path)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize("ttl", [10**30, 30 * 24 * 3600 + 1])
def test_a_huge_ttl_is_422_and_writes_nothing(agent, ttl):
    item = {"tier": "session", "session_id": "s", "content": "c", "ttl_seconds": ttl}

    response = agent.post(MEMORY, item)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert SessionMemory.objects.count() == 0


def test_article_ids_that_are_not_a_list_are_422(agent):
    response = agent.post(
        "/api/v1/recall/00000000-0000-0000-0000-000000000001/referenced", {"article_ids": 5}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_article_ids"


@pytest.mark.parametrize("path", [RECALL, MERGED])
def test_a_null_query_is_invalid_query(agent, path):
    response = agent.post(path, {"query": None})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_query"


def test_a_blank_project_id_is_the_global_bucket_on_write_and_recall(agent):
    written = agent.post(MEMORY, {"text": "global fact about tea", "project_id": ""})
    memory_embed_pending(memory_ids=[written.json()["data"]["id"]])
    recalled = agent.post(RECALL, {"query": "tea", "project_id": "", "mode": "keyword"})
    merged = agent.post(MERGED, {"query": "tea", "project_id": "  "})

    assert written.status_code == 201
    assert written.json()["data"]["project_id"] is None
    assert Memory.objects.get().project_id is None
    assert recalled.status_code == 200
    assert [hit["memory"]["id"] for hit in recalled.json()["data"]] == [
        written.json()["data"]["id"]
    ]
    assert merged.status_code == 200


@pytest.mark.parametrize("value", ["not-a-uuid", 5, ["x"], {"a": 1}])
def test_a_malformed_project_id_is_invalid_project_id_on_write(agent, value):
    response = agent.post(MEMORY, {"text": "t", "project_id": value})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_project_id"
    assert Memory.objects.count() == 0


def test_a_huge_article_version_is_422(user):
    created = user.post(ARTICLES, {"title": "Versioned", "body": "b", "category": "finding"})
    article_id = created.json()["data"]["article"]["id"]

    response = user.patch(f"{ARTICLES}/{article_id}", {"version": 10**20, "body": "changed"})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert Article.objects.get().body == "b"


def test_a_url_over_the_bound_is_414_uri_too_long_and_one_within_it_is_served(agent, settings):
    settings.REQUEST_URL_MAX_BYTES = 200
    within = agent.get(f"/api/v1/projects/resolve?name={'n' * 100}")
    beyond = agent.get(f"/api/v1/projects/resolve?name={'n' * 300}")

    assert within.status_code != 414
    assert beyond.status_code == 414
    assert beyond.json()["error"] == {
        "code": "uri_too_long",
        "message": "The request's path and query string are longer than 200 bytes.",
        "details": {"max_bytes": 200},
    }


def test_a_long_url_is_refused_before_a_write(agent, settings):
    settings.REQUEST_URL_MAX_BYTES = 100
    response = agent.post(f"{MEMORY}?pad={'p' * 200}", {"text": "never stored"})

    assert response.status_code == 414
    assert Memory.objects.count() == 0
