import json

import pytest

from apps.knowledge.models import AccessType, ArticleAccessEvent
from apps.knowledge.selectors import knowledge_retrieval_metrics
from tests.knowledge.factories import ArticleFactory
from tests.knowledge.helpers import break_embeddings, publish
from tests.memory.factories import memory_row
from tests.memory.helpers import remember
from tests.projects.factories import ProjectFactory

RECALL = "/api/v1/recall"
# Fixed ids in parametrize: xdist workers must collect identical test ids.
UNKNOWN_ID = "00000000-0000-4000-8000-000000000002"
FIFTY_ONE_IDS = [f"00000000-0000-4000-8000-{i:012d}" for i in range(51)]


@pytest.fixture
def corpus(tenant):
    # Read-side state only, so rows straight from the factories (as the services leave them:
    # embedded, the articles published by a curator).
    memory_row(tenant, "agent-a", "the staging database runs postgres 18 on port 5433")
    memory_row(tenant, "agent-a", "deploys go out through argo cd every tuesday")
    memory_row(tenant, "agent-b", "agent b private postgres note")
    for title, body in [
        ("Postgres upgrade runbook", "How we upgrade postgres: dump, restore, verify."),
        ("Deploy policy", "All deploys go through argo cd with a canary stage."),
        ("Lunch menu", "Pizza on fridays."),
    ]:
        ArticleFactory.create(tenant=tenant, title=title, body=body, curated=True, embedded=True)
    return tenant


def _recall(caller, **body):
    response = caller.post(RECALL, {"query": "postgres database", **body})
    assert response.status_code == 200, response.content
    return response.json()


def test_merged_recall_returns_both_sources_in_the_deterministic_order(agent, corpus):
    body = _recall(agent, limit=6)

    data = body["data"]
    sources = {item["source"] for item in data}
    keys = [
        (
            -(item["score"] if item["score"] is not None else -1),
            item["source"] != "knowledge",
            item["id"],
        )
        for item in data
    ]
    assert sources == {"memory", "knowledge"}
    assert keys == sorted(keys)
    assert [item["rank"] for item in data] == list(range(1, len(data) + 1))
    assert body["meta"]["results_ranking"] == "heuristic_cross_source"
    assert "agent b private postgres note" not in json.dumps(body)


def test_ledger_sums_and_semantics(agent, corpus):
    body = _recall(agent, limit=3)

    meta, data = body["meta"], body["data"]
    on_offer = meta["memory_count"] + meta["knowledge_count"]
    assert meta["selected_count"] == len(data) == 3
    assert meta["tokens_selected"] == sum(item["tokens_estimate"] for item in data)
    assert meta["tokens_candidates"] >= meta["tokens_selected"]
    assert meta["tokens_saved_vs_candidates"] == meta["tokens_candidates"] - meta["tokens_selected"]
    assert (
        meta["candidates_considered"]["memory"]
        == meta["memory_count"]
        == len(body["memory"]["results"])
    )
    assert meta["candidates_considered"]["total"] == (
        meta["candidates_considered"]["memory"] + meta["candidates_considered"]["knowledge"]
    )
    assert on_offer >= len(data)
    assert body["knowledge"]["meta"]["limit"] == 3
    for item in data:
        text = item["text"] if item["source"] == "memory" else f"{item['title']}\n{item['snippet']}"
        assert item["tokens_estimate"] == len(text.encode()) // 4


def test_tokens_candidates_counts_only_rows_that_were_on_offer(agent, corpus):
    body = _recall(agent, limit=1)

    memory_tokens = sum(len(r["memory"]["text"].encode()) // 4 for r in body["memory"]["results"])
    knowledge_tokens = sum(
        len(f"{r['title']}\n{r['snippet']}".encode()) // 4 for r in body["knowledge"]["results"]
    )
    meta = body["meta"]
    # Over what the merged cap could hand out: each half's survivors, not the knowledge pool.
    assert meta["tokens_candidates"] == memory_tokens + knowledge_tokens
    assert meta["candidates_considered"]["knowledge"] > len(body["knowledge"]["results"])
    assert meta["selected_count"] == 1


def test_unchanged_corpus_gives_a_byte_identical_data_array(agent, corpus):
    first = _recall(agent, limit=5)
    second = _recall(agent, limit=5)

    assert json.dumps(first["data"]) == json.dumps(second["data"])
    assert first["meta"]["recall_id"] != second["meta"]["recall_id"]


def test_recall_id_is_the_search_id_of_the_surfaced_events(agent, corpus):
    body = _recall(agent, limit=5)

    surfaced = set(
        ArticleAccessEvent.objects.filter(
            access_type=AccessType.SURFACED, search_id=body["meta"]["recall_id"]
        ).values_list("article_id", flat=True)
    )
    assert {str(a) for a in surfaced} == {
        item["id"] for item in body["data"] if item["source"] == "knowledge"
    } | {item["id"] for item in body["knowledge"]["results"]}


def test_agent_sees_published_articles_only(agent, corpus):
    publish(corpus, "Postgres draft notes", "postgres database draft", status="draft")

    body = _recall(agent, limit=10)

    assert "Postgres draft notes" not in [item.get("title") for item in body["data"]]


def test_project_partition_applies_to_both_halves(agent, tenant):
    alpha = ProjectFactory.create(tenant=tenant)
    remember(tenant, "agent-a", "global postgres memory")
    remember(tenant, "agent-a", "alpha postgres memory", project_id=alpha.pk)
    publish(tenant, "Alpha postgres article", "postgres database for alpha", project_id=alpha.pk)

    without = _recall(agent, limit=10)
    within = _recall(agent, limit=10, project_id=str(alpha.pk))

    texts = lambda body: {i.get("text") or i.get("title") for i in body["data"]}  # noqa: E731
    assert "alpha postgres memory" not in texts(without)
    assert "Alpha postgres article" not in texts(without)
    assert {"alpha postgres memory", "Alpha postgres article"} <= texts(within)


@pytest.mark.parametrize(
    ("_case", "body", "code"),
    [
        ("blank", {"query": " "}, "invalid_query"),
        ("number", {"query": 3}, "invalid_query"),
        ("too_long", {"query": "q" * 501}, "query_too_long"),
        ("session_number", {"query": "x", "session_id": 5}, "invalid_session_id"),
        ("session_too_long", {"query": "x", "session_id": "é" * 101}, "invalid_session_id"),
    ],
)
def test_bad_input_is_422_before_any_embedding(agent, mocker, db, _case, body, code):
    embed = mocker.patch("apps.providers.embeddings.embed_texts")

    response = agent.post(RECALL, body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    embed.assert_not_called()


def test_embeddings_down_degrades_both_halves_but_answers(agent, corpus):
    break_embeddings(corpus)

    body = _recall(agent, limit=5)

    assert body["meta"]["degraded"] is True
    assert "memory_fallback:provider_error" in body["meta"]["degraded_reason"]
    assert "knowledge_keyword_only" in body["meta"]["degraded_reason"]
    assert {item["selection_reason"] for item in body["data"]} <= {
        "ilike_fallback",
        "keyword_fallback",
    }
    assert body["data"] != []


def test_knowledge_half_failing_still_returns_memory(agent, corpus, mocker):
    mocker.patch("apps.recall.selectors.knowledge_search", side_effect=RuntimeError("boom"))

    body = _recall(agent, limit=5)

    assert body["meta"]["degraded"] is True
    assert body["meta"]["degraded_reason"] == "knowledge_error"
    assert {item["source"] for item in body["data"]} == {"memory"}
    assert body["meta"]["answer_confidence"] == "none"


def test_memory_half_failing_still_returns_knowledge(agent, corpus, mocker):
    mocker.patch("apps.recall.selectors.memory_recall", side_effect=RuntimeError("boom"))

    body = _recall(agent, limit=5)

    assert body["meta"]["degraded_reason"] == "memory_error"
    assert {item["source"] for item in body["data"]} == {"knowledge"}


def test_shed_memory_half_degrades(agent, corpus, settings):
    from apps.core.heavy_read import heavy_read_slot

    settings.HEAVY_READ_MAX_CONCURRENT_PER_TENANT = 1
    with heavy_read_slot(tenant_id=corpus.pk):
        body = _recall(agent, limit=5)

    assert body["meta"]["degraded"] is True
    assert "heavy_read_shed" in body["meta"]["degraded_reason"]


def test_history_containment_refills_and_is_keyed_by_caller(
    agent, other_agent, foreign_agent, corpus, other_tenant
):
    publish(other_tenant, "Postgres upgrade runbook", "How we upgrade postgres: dump, restore.")
    foreign_first = _recall(foreign_agent, limit=1, session_id="s1")
    first = _recall(agent, limit=1, session_id="s1")
    second = _recall(agent, limit=1, session_id="s1")
    peer = _recall(other_agent, limit=1, session_id="s1")
    foreign_again = _recall(foreign_agent, limit=1, session_id="s1")

    def knowledge_ids(body):
        return [i["id"] for i in body["knowledge"]["results"]]

    assert knowledge_ids(first) != knowledge_ids(second)  # already shown → refilled
    assert knowledge_ids(peer) == knowledge_ids(first)  # another agent's bucket is its own
    # Same agent_id and session_id in another tenant: a separate bucket both ways.
    assert foreign_first["meta"]["diversity"]["dropped_already_seen"] == 0
    assert first["meta"]["diversity"]["dropped_already_seen"] == 0
    assert foreign_again["meta"]["diversity"]["readmitted_already_seen"] == 1
    assert second["meta"]["diversity"]["dropped_already_seen"] >= 1


def test_history_floor_readmits_when_the_pool_is_exhausted(agent, tenant):
    publish(tenant, "Only postgres article", "postgres database only one")

    bodies = [_recall(agent, limit=1, session_id="s9") for _ in range(3)]

    assert all(len(body["knowledge"]["results"]) == 1 for body in bodies)
    assert bodies[-1]["meta"]["diversity"]["readmitted_already_seen"] >= 1


def test_referenced_records_surfaced_articles_once(agent, corpus):
    body = _recall(agent, limit=5)
    recall_id = body["meta"]["recall_id"]
    article_ids = [i["id"] for i in body["knowledge"]["results"]][:1]

    first = agent.post(f"{RECALL}/{recall_id}/referenced", {"article_ids": article_ids})
    again = agent.post(f"{RECALL}/{recall_id}/referenced", {"article_ids": article_ids})
    metrics = knowledge_retrieval_metrics(tenant=corpus, window="24h")

    assert first.status_code == again.status_code == 201
    assert metrics.referenced == 1


def test_referenced_is_all_or_nothing(agent, corpus):
    body = _recall(agent, limit=5)
    recall_id = body["meta"]["recall_id"]
    surfaced = [i["id"] for i in body["knowledge"]["results"]][:1]
    memory_id = next(i["id"] for i in body["data"] if i["source"] == "memory")

    response = agent.post(
        f"{RECALL}/{recall_id}/referenced", {"article_ids": [*surfaced, memory_id]}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "not_surfaced"
    assert not ArticleAccessEvent.objects.filter(access_type=AccessType.REFERENCED).exists()


@pytest.mark.parametrize(
    ("_case", "recall_id", "article_ids", "code"),
    [
        ("bad_recall_id", "not-a-uuid", [], "invalid_recall_id"),
        ("unknown_recall_id", UNKNOWN_ID, [UNKNOWN_ID], "not_surfaced"),
        ("bad_article_ids", None, "nope", "invalid_article_ids"),
        (
            "too_many",
            None,
            [f"00000000-0000-4000-8000-{i:012d}" for i in range(51)],
            "too_many_article_ids",
        ),
    ],
)
def test_referenced_rejects_bad_input(agent, corpus, _case, recall_id, article_ids, code):
    recall_id = recall_id or _recall(agent)["meta"]["recall_id"]

    response = agent.post(f"{RECALL}/{recall_id}/referenced", {"article_ids": article_ids})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert not ArticleAccessEvent.objects.filter(access_type=AccessType.REFERENCED).exists()


def test_foreign_tenant_cannot_reference_another_tenants_recall(agent, foreign_agent, corpus):
    body = _recall(agent, limit=5)
    article_ids = [i["id"] for i in body["knowledge"]["results"]][:1]

    response = foreign_agent.post(
        f"{RECALL}/{body['meta']['recall_id']}/referenced", {"article_ids": article_ids}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "not_surfaced"


def test_recall_requires_a_key(anonymous, db):
    assert anonymous.post(RECALL, {"query": "x"}, format="json").status_code == 401


def test_both_halves_share_one_query_embedding(agent, corpus, mocker):
    from apps.providers import query_vectors

    query_vectors.clear_query_vectors()
    embed = mocker.spy(query_vectors, "embed_search_query")

    body = _recall(agent, query="which port does staging postgres use", limit=6)

    assert {item["source"] for item in body["data"]} == {"memory", "knowledge"}
    assert body["meta"]["degraded"] is False
    assert embed.call_count == 1
