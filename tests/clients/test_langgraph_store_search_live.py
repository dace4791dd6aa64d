"""``EngramStore``'s search against a live Engram: a namespace is one server-side filter, so a
query ranks every item of it; value filters (string ranges too) narrow inside the same query;
a put is findable by meaning when it returns; ``index=False`` items are never ranked."""

from __future__ import annotations

import pytest
from engram_client import Engram, NewMemory
from engram_client.langgraph import NOINDEX_TAG
from langgraph.store.memory import InMemoryStore

from apps.memory.models import Memory as MemoryRow
from apps.memory.services import memory_embed_pending

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def test_the_hungry_example_finds_its_memory_on_the_first_search(make_store, tenant):
    # Given the tenant embeds with the real local model (the example is about meaning: no
    # word of the query is in the memory it should find)
    tenant.embedding_provider = "local"
    tenant.embedding_config = {}
    tenant.save()
    store = make_store()

    # When LangGraph's memory docs example runs verbatim
    store.put(("user_123", "memories"), "1", {"text": "I love pizza"})
    store.put(("user_123", "memories"), "2", {"text": "I am a plumber"})

    items = store.search(("user_123", "memories"), query="I'm hungry", limit=1)

    # Then the first search finds the pizza, with no wait for a background embedding
    assert [item.value for item in items] == [{"text": "I love pizza"}]
    assert items[0].score is not None


def test_a_query_search_ranks_every_item_of_its_namespace(make_store, live_server, agent_key):
    # Given 150 of the subject's memories that match the query better, outside the namespace
    engram = Engram(live_server.url, agent_key)
    crowd = engram.remember_many(
        [
            NewMemory(text=f"Pizza order {n}: pizza, pizza, more pizza.", tags=["crowd"])
            for n in range(150)
        ]
    )
    memory_embed_pending(memory_ids=[str(memory.id) for memory in crowd])
    engram.close()
    store = make_store()
    for n in range(5):
        store.put(("orders", "mine"), f"o{n}", {"text": f"Order {n} came with one pizza."})

    # When searching the namespace by query
    found = store.search(("orders", "mine"), query="pizza pizza order", limit=10)

    # Then all five come back, and nothing else
    assert sorted(item.key for item in found) == [f"o{n}" for n in range(5)]
    assert all(item.score is not None for item in found)
    assert MemoryRow.objects.count() == 155


@pytest.mark.parametrize("with_query", [False, True])
def test_string_ranges_filter_inside_the_search(make_store, with_query):
    store = make_store()
    for key, name in [("a", "apple"), ("b", "banana"), ("c", "cherry"), ("d", "Date")]:
        store.put(("fruit",), key, {"text": f"{name} is a fruit", "name": name})
    query = "fruit" if with_query else None

    above_b = store.search(("fruit",), query=query, filter={"name": {"$gt": "b"}})
    below_c = store.search(("fruit",), query=query, filter={"name": {"$lt": "c", "$gte": "a"}})
    numeric = store.search(("fruit",), query=query, filter={"name": {"$gt": 3}})

    assert sorted(item.key for item in above_b) == ["b", "c"]
    assert sorted(item.key for item in below_c) == ["a", "b"]
    assert numeric == []


def test_filters_behave_as_in_memory_stores_on_equality_and_numbers(make_store):
    engram_store, reference = make_store(), InMemoryStore()
    values = {
        "x": {"text": "one", "n": 1, "kind": "note", "meta": {"team": "a"}, "labels": ["p", "q"]},
        "y": {"text": "two", "n": 2.5, "kind": "task", "meta": {"team": "b"}, "labels": ["q"]},
        "z": {"text": "three", "n": 7, "kind": "task"},
    }
    for key, value in values.items():
        engram_store.put(("f",), key, value)
        reference.put(("f",), key, value)
    filters = [
        {"kind": "task"},
        {"n": {"$gte": 2, "$lt": 7}},
        {"n": {"$ne": 1}},
        {"kind": {"$eq": "note"}},
        {"meta": {"team": "b"}},
        {"labels": ["p", "q"]},
        {"kind": "task", "n": {"$gt": 5}},
        {"missing": None},
    ]

    for condition in filters:
        expected = sorted(item.key for item in reference.search(("f",), filter=condition))
        got = sorted(item.key for item in engram_store.search(("f",), filter=condition))
        assert (condition, got) == (condition, expected)


def test_index_false_is_stored_but_never_ranked(make_store):
    store = make_store()
    store.put(("notes",), "ranked", {"text": "the pizza place on the corner"})
    store.put(("notes",), "hidden", {"text": "pizza pizza pizza"}, index=False)

    top_one = store.search(("notes",), query="pizza", limit=1)
    both = store.search(("notes",), query="pizza", limit=5)
    row = MemoryRow.objects.get(tags__contains=[NOINDEX_TAG])

    # The ranked item comes first even though the hidden one matches the query better; the
    # hidden one only fills the rest, unscored, as InMemoryStore does.
    assert [item.key for item in top_one] == ["ranked"]
    assert [(item.key, item.score is None) for item in both] == [
        ("ranked", False),
        ("hidden", True),
    ]
    assert store.get(("notes",), "hidden").value == {"text": "pizza pizza pizza"}
    assert row.embedded_at is None  # written without waiting for its embedding


def test_index_fields_come_from_the_index_configuration(make_store):
    store = make_store(index={"dims": 1536, "embed": "openai:unused", "fields": ["title"]})

    store.put(("docs",), "d", {"title": "Deploy checklist", "body": "irrelevant words"})

    assert store.index_fields == ["title"]
    assert MemoryRow.objects.get().text == "Deploy checklist"


def test_a_value_over_the_metadata_cap_is_refused(make_store):
    from engram_client.errors import EngramError

    store = make_store()
    with pytest.raises(EngramError) as caught:
        store.put(("big",), "k", {"text": "x" * (17 * 1024)})

    assert caught.value.code == "metadata_too_large"
    assert MemoryRow.objects.count() == 0
