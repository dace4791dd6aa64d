"""Each recall hit's cosine ``similarity``: the same value whichever leg found the memory."""

import pytest

from apps.memory.selectors import memory_recall
from tests.memory.factories import memory_row

RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"


@pytest.fixture
def trips(tenant):
    # Short rows sharing "trip" sit nearest the query's vector; the one row with the rare
    # word "kayak" is long, so it is far down the vector ranking but first by words.
    for index in range(6):
        memory_row(tenant, "agent-a", f"trip {index}")
    memory_row(
        tenant,
        "agent-a",
        "Bob said he finally bought a kayak after saving for months from his weekend job",
    )
    return tenant


def _cosines(tenant, query):
    everything = memory_recall(
        tenant=tenant, subject_id="agent-a", query=query, mode="semantic", limit=50
    )
    return {hit.memory.pk: hit.similarity for hit in everything.results}


def test_keyword_only_hybrid_hit_carries_its_cosine(trips, settings):
    settings.MEMORY_RECALL_FUSION_CANDIDATES = 1
    settings.MEMORY_RECALL_SEMANTIC_WEIGHT = 0.1
    query = "kayak trip"

    result = memory_recall(tenant=trips, subject_id="agent-a", query=query, limit=3)

    reasons = {hit.memory.text: hit.selection_reason for hit in result.results}
    assert reasons[trips_kayak_text()] == "keyword"
    cosines = _cosines(trips, query)
    for hit in result.results:
        assert hit.similarity is not None
        assert hit.similarity == pytest.approx(cosines[hit.memory.pk], abs=1e-9)
    # The fused score is a rank: the keyword-only first hit is not the most similar.
    first = result.results[0]
    assert first.memory.text == trips_kayak_text()
    assert first.similarity < max(cosines.values())


def trips_kayak_text():
    return "Bob said he finally bought a kayak after saving for months from his weekend job"


def test_keyword_mode_has_no_similarity(trips):
    result = memory_recall(tenant=trips, subject_id="agent-a", query="kayak", mode="keyword")

    assert result.results
    assert all(hit.similarity is None for hit in result.results)


def test_api_hits_carry_similarity_next_to_score(agent, trips):
    body = agent.post(RECALL, {"query": "kayak trip", "limit": 3}).json()
    cosines = {str(pk): value for pk, value in _cosines(trips, "kayak trip").items()}

    assert body["data"]
    for hit in body["data"]:
        assert set(hit) >= {"memory", "score", "similarity", "selection_reason"}
        assert hit["similarity"] == pytest.approx(cosines[hit["memory"]["id"]], abs=1e-6)

    keyword = agent.post(RECALL, {"query": "kayak", "mode": "keyword"}).json()
    assert [hit["similarity"] for hit in keyword["data"]] == [None]


def test_fallback_hits_have_no_similarity(agent, trips):
    trips.embedding_provider = "openai"
    trips.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    trips.save()

    body = agent.post(RECALL, {"query": "kayak trip"}).json()

    assert body["meta"]["fallback"] is True
    assert body["data"]
    assert {hit["similarity"] for hit in body["data"]} == {None}


def test_merged_recall_memory_items_carry_similarity(agent, trips):
    body = agent.post(MERGED, {"query": "kayak trip", "limit": 3}).json()
    cosines = {str(pk): value for pk, value in _cosines(trips, "kayak trip").items()}

    memories = [item for item in body["data"] if item["source"] == "memory"]
    assert memories
    for item in memories:
        assert item["similarity"] == pytest.approx(cosines[item["id"]], abs=1e-6)
