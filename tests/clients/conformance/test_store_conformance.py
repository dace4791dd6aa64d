"""``EngramStore`` against LangGraph's ``InMemoryStore``: the same calls, the same answers.

Each case is modelled on a test of LangGraph's own store suite (``libs/checkpoint/tests/``
in langchain-ai/langgraph: ``test_store.py``, ``test_store_namespace_validation.py``,
``test_inmemory_store_dotted_filters.py``), named in its docstring, and compares what the two
stores return. Normalisation (docs/client.md, "Conformance"): items are compared as
``(namespace, key, value)``, the two backends' clocks aside; a search without a query is
compared as the set of items it returned (``BaseStore`` leaves that order to the store); a
search with a query by its top hit and the set of items, since the two rank with different
scoring (cosine of one vector against Engram's hybrid recall).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from engram_client import InvalidRequestError
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])

Entry = tuple[tuple[str, ...], str, dict[str, Any]]


def entry(item: Item | None) -> Entry | None:
    return None if item is None else (item.namespace, item.key, item.value)


def entries(items: list[SearchItem]) -> list[Entry]:
    """A search's items as a set (sorted), for searches whose order is the store's own."""
    return sorted(((item.namespace, item.key, item.value) for item in items), key=repr)


def keys(items: list[SearchItem]) -> list[str]:
    return sorted(item.key for item in items)


def ranked(items: list[SearchItem]) -> tuple[str | None, list[str]]:
    """A search with a query: its top hit, and the set of keys it returned."""
    return (items[0].key if items else None), keys(items)


def outcome(call: Any) -> Any:
    try:
        return call()
    except Exception as error:  # the type is what both stores must agree on
        return type(error).__name__


# ------------------------------------------------------------------------------ namespaces

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("users", "789", "settings"),
    ("admin", "users", "789"),
    ("guests", "456", "preferences"),
    *[("namespace", f"sub_{n:02d}") for n in range(12)],
]


def test_list_namespaces_by_prefix_suffix_wildcards_depth_and_page(stores):
    """Modelled on ``test_list_namespaces_basic``, ``test_list_namespaces_with_wildcards``,
    ``test_list_namespaces_pagination``, ``test_list_namespaces_max_depth``,
    ``test_list_namespaces_no_conditions`` and ``test_list_namespaces_empty_store``."""

    async def scenario(store) -> dict[str, Any]:
        seen: dict[str, Any] = {"empty": await store.alist_namespaces()}
        await store.abatch(
            [
                PutOp(namespace, f"id_{n}", {"data": f"value_{n:02d}"})
                for n, namespace in enumerate(NAMESPACES)
            ]
        )
        listings = {
            "all": {},
            "prefix": {"prefix": ("a", "b")},
            "suffix": {"suffix": ("f",)},
            "prefix_and_suffix": {"prefix": ("a",), "suffix": ("f",)},
            "depth": {"prefix": ("a", "b"), "max_depth": 3},
            "depth_everywhere": {"max_depth": 2},
            "first_page": {"prefix": ("a", "b"), "limit": 2},
            "past_the_first": {"prefix": ("a", "b"), "offset": 2},
            "middle_page": {"prefix": ("namespace",), "limit": 5, "offset": 5},
            "wildcard_prefix": {"prefix": ("a", "*", "f")},
            "wildcard_suffix": {"suffix": ("*", "f")},
            "wildcard_tail": {"prefix": ("users", "*")},
            "wildcard_head": {"suffix": ("*", "preferences")},
            "wildcards_that_miss": {"prefix": ("*", "users"), "suffix": ("*", "settings")},
            "nothing_there": {"prefix": ("nonexistent",)},
            "exact": {"prefix": ("users", "123")},
        }
        for name, options in listings.items():
            seen[name] = await store.alist_namespaces(**options)
        seen["both_conditions"] = await store.abatch(
            [
                ListNamespacesOp(
                    match_conditions=(
                        MatchCondition("prefix", ("users",)),
                        MatchCondition("suffix", ("settings",)),
                    )
                )
            ]
        )
        return seen

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference["empty"] == []
    assert reference["wildcard_prefix"] == [("a", "b", "f"), ("a", "c", "f")]
    assert reference["middle_page"] == [("namespace", f"sub_{n:02d}") for n in range(5, 10)]


INVALID_NAMESPACES: list[Any] = [("foo.bar",), ("foo", ""), (123,)]


def test_namespace_labels_are_checked_before_any_operation(stores):
    """Modelled on ``test_base_rejects_invalid_labels``, ``test_async_rejects_invalid_labels``
    and ``test_cannot_put_empty_namespace``: bad labels raise ``InvalidNamespaceError``
    everywhere; ``langgraph`` is refused as the root of a put but allowed below it, and an op
    handed to ``batch`` directly is not held to the public ``put``'s root rule."""
    doc = {"foo": "bar"}

    async def scenario(store) -> list[Any]:
        seen = []
        for namespace in INVALID_NAMESPACES:
            seen.append(outcome(lambda ns=namespace: store.get(ns, "key")))
            seen.append(outcome(lambda ns=namespace: store.delete(ns, "key")))
            seen.append(outcome(lambda ns=namespace: store.search(ns)))
            seen.append(outcome(lambda ns=namespace: store.list_namespaces(prefix=ns)))
            seen.append(outcome(lambda ns=namespace: store.list_namespaces(suffix=ns)))
            try:
                await store.aget(namespace, "key")
            except InvalidNamespaceError:
                seen.append("async InvalidNamespaceError")
        for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
            seen.append(outcome(lambda ns=namespace: store.put(ns, "foo", doc)))
            try:
                await store.aput(namespace, "foo", doc)
            except InvalidNamespaceError:
                seen.append("async InvalidNamespaceError")
        for namespace in [("foo", "langgraph", "foo"), ("langgraph", "foo")]:
            await store.abatch([PutOp(namespace, "bar", doc)])
            seen.append(entry(await store.aget(namespace, "bar")))
            seen.append(entries(await store.asearch(namespace)))
            await store.adelete(namespace, "bar")
            seen.append(entry(await store.aget(namespace, "bar")))
        return seen

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference[:6] == ["InvalidNamespaceError"] * 5 + ["async InvalidNamespaceError"]
    assert reference[-3:] == [
        (("langgraph", "foo"), "bar", doc),
        [(("langgraph", "foo"), "bar", doc)],
        None,
    ]


# ------------------------------------------------------------------------------ put / get


def test_put_get_overwrite_and_delete_sync_and_async(stores):
    """Modelled on the put/get/delete round trips of ``test_cannot_put_empty_namespace`` and
    the overwrite of ``test_vector_update_with_embedding``, through both the sync and the async
    methods, and on ``BaseStore``'s refusal of a TTL by a store without them."""
    namespace = ("prefs", "ada")

    async def scenario(store) -> list[Any]:
        store.put(namespace, "editor", {"text": "Ada uses vim", "since": 2019})
        seen: list[Any] = [entry(store.get(namespace, "editor"))]
        await store.aput(namespace, "editor", {"text": "Ada switched to helix", "since": 2025})
        seen.append(entry(await store.aget(namespace, "editor")))
        await store.aput(namespace, "shell", {"text": "Ada uses fish"})
        seen.append(entries(store.search(namespace)))
        seen.append(entry(store.get(namespace, "missing")))
        seen.append(entry(store.get(("prefs",), "editor")))  # a prefix is not the namespace
        # Neither store keeps TTLs: a put with one is refused before anything is written.
        seen.append(outcome(lambda: store.put(namespace, "ttl", {"text": "x"}, ttl=5)))
        store.delete(namespace, "editor")
        await store.adelete(namespace, "shell")
        await store.adelete(namespace, "never-there")
        seen.append([entry(await store.aget(namespace, key)) for key in ("editor", "shell")])
        seen.append(entries(await store.asearch(namespace)))
        return seen

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference[1] == (namespace, "editor", {"text": "Ada switched to helix", "since": 2025})
    assert reference[-2:] == [[None, None], []]
    assert reference[5] == "NotImplementedError"


def test_an_overwrite_keeps_created_at_where_the_in_memory_store_resets_it(stores):
    """Listed difference (docs/client.md, "Conformance"): ``InMemoryStore`` gives an
    overwritten item a new ``created_at``; ``EngramStore`` keeps the first write's, as
    LangGraph's Postgres store does. Both move ``updated_at``."""

    def scenario(store) -> tuple[bool, bool]:
        store.put(("prefs",), "editor", {"text": "vim"})
        first = store.get(("prefs",), "editor")
        store.put(("prefs",), "editor", {"text": "helix"})
        second = store.get(("prefs",), "editor")
        return second.created_at == first.created_at, second.updated_at > first.updated_at

    reference, engram = stores.call(scenario)

    assert reference == (False, True)
    assert engram == (True, True)


def test_a_value_past_engrams_metadata_cap_is_refused(stores):
    """Listed difference (docs/client.md, "Conformance"): an item's value is kept in Engram's
    metadata, capped at 16 KiB; ``InMemoryStore`` takes any size."""
    big = {"text": "big", "blob": "x" * 20_000}

    def scenario(store) -> Any:
        try:
            store.put(("docs",), "big", big)
        except InvalidRequestError as refused:
            return refused.status, refused.code
        return entry(store.get(("docs",), "big"))

    reference, engram = stores.call(scenario)

    assert reference == (("docs",), "big", big)
    assert engram == (422, "metadata_too_large")


# --------------------------------------------------------------------------------- batch


def test_a_batchs_reads_see_the_items_as_before_its_writes(stores):
    """Modelled on ``test_async_batch_store_deduplication``: one batch's reads answer from the
    store as it was before the batch, its writes land after them, and of several puts of one
    item the last wins; results come back in the order of the ops."""
    namespace = ("test",)

    async def scenario(store) -> list[Any]:
        await store.aput(namespace, "key", {"value": 0})
        ops = [
            PutOp(namespace, "key", {"value": 1}),
            GetOp(namespace, "key"),
            PutOp(namespace, "key", {"value": 2}),
            PutOp(namespace, "other", {"value": 3}),
            SearchOp(namespace, limit=10),
            GetOp(namespace, "other"),
            PutOp(namespace, "gone", None),
        ]
        sync_results = store.batch(ops)
        after_sync = entries(store.search(namespace))
        await store.adelete(namespace, "other")
        async_results = await store.abatch(ops)
        return [
            [entries(result) if isinstance(result, list) else entry(result) for result in results]
            for results in (sync_results, async_results)
        ] + [after_sync, entries(await store.asearch(namespace))]

    reference, engram = stores.run(scenario)

    assert engram == reference
    before = (namespace, "key", {"value": 0})
    after = [(namespace, "key", {"value": 2}), (namespace, "other", {"value": 3})]
    assert reference[0] == [None, before, None, None, [before], None, None]
    assert reference[2:] == [after, after]


# -------------------------------------------------------------------------------- search

FILTER_DOCS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("docs", "a"), "doc1", {"text": "red apple", "color": "red", "score": 4.5, "tags": ["x"]}),
    (("docs", "a"), "doc2", {"text": "red car", "color": "red", "score": 3.0, "tags": ["y"]}),
    (("docs", "b"), "doc3", {"text": "green apple", "color": "green", "score": 4.0, "tags": []}),
    (("docs", "b"), "doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    (
        ("other",),
        "doc5",
        {"text": "blue apple", "color": "blue", "score": 5.0, "user": {"access-level": "nested"}},
    ),
]


def _put_all(store, docs) -> None:
    for namespace, key, value in docs:
        store.put(namespace, key, value)


def test_search_without_a_query_keeps_to_the_prefix_and_the_filter(stores):
    """Modelled on the filters of ``test_vector_search_with_filters`` and
    ``test_async_batched_vector_search_concurrent`` (equality, ``$eq $ne $gt $gte $lt
    $lte``, several at once), nested and list values, and
    ``test_inmemory_store_search_supports_dotted_filter_keys``; compared as sets."""
    filters: dict[str, dict[str, Any]] = {
        "equal": {"color": "red"},
        "eq": {"color": {"$eq": "blue"}},
        "ne": {"color": {"$ne": "red"}},
        "gt": {"score": {"$gt": 3.2}},
        "gte_and_equal": {"score": {"$gte": 4.0}, "color": "green"},
        "lt": {"score": {"$lt": 4.0}},
        "lte": {"score": {"$lte": 3.5}},
        "range": {"score": {"$gt": 3.0, "$lt": 4.5}},
        "list": {"tags": ["x"]},
        "empty_list": {"tags": []},
        "nested": {"user": {"access-level": "nested"}},
        "dotted": {"user.access-level": "nested"},
        "nothing": {"color": "purple"},
    }

    async def scenario(store) -> dict[str, Any]:
        _put_all(store, FILTER_DOCS)
        seen: dict[str, Any] = {
            "everything": entries(store.search((), limit=100)),
            "docs": keys(store.search(("docs",))),
            "docs_a": keys(await store.asearch(("docs", "a"))),
            "no_such_prefix": keys(store.search(("doc",))),
        }
        for name, condition in filters.items():
            seen[name] = keys(store.search((), filter=condition, limit=100))
        first, second = store.search((), limit=2), store.search((), limit=2, offset=2)
        rest = store.search((), limit=10, offset=4)
        seen["pages"] = [len(first), len(second), len(rest), keys(first + second + rest)]
        return seen

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference["gt"] == ["doc1", "doc3", "doc4", "doc5"]
    assert reference["range"] == ["doc3", "doc4"]
    assert reference["pages"] == [2, 2, 1, ["doc1", "doc2", "doc3", "doc4", "doc5"]]


def test_a_range_filter_on_a_missing_or_text_value(stores):
    """Listed difference (docs/client.md, "Conformance"): ``InMemoryStore`` compares range
    operators as floats, so one that meets an item without the field, or text that is not a
    number (an ISO date), raises, and numeric text compares as a number. Engram compares like
    with like inside its query: a number with numbers, an ISO date with dates, other text in
    code-point order; an item without the field, or of another kind, does not match."""
    docs = [
        (("docs",), "number", {"text": "a", "n": 7, "when": "2024-03-01"}),
        (("docs",), "numeric_text", {"text": "b", "n": "8", "when": "2024-09-01"}),
        (("docs",), "missing", {"text": "c"}),
    ]

    def scenario(store) -> list[Any]:
        _put_all(store, docs)
        conditions: list[dict[str, Any]] = [
            {"n": {"$gte": 7}},
            {"when": {"$gt": "2024-06-01"}},
            {"n": {"$ne": 7}},
        ]
        return [
            outcome(lambda condition=condition: keys(store.search(("docs",), filter=condition)))
            for condition in conditions
        ]

    reference, engram = stores.call(scenario)

    assert reference == ["TypeError", "ValueError", ["missing", "numeric_text"]]
    assert engram == [["number"], ["numeric_text"], ["missing", "numeric_text"]]


def test_search_with_a_query_ranks_the_filtered_prefix(stores):
    """Modelled on ``test_vector_search_with_filters``: a query picks the closest item among
    those the filter keeps."""
    searches: dict[str, dict[str, Any]] = {
        "apple_red": {"query": "apple", "filter": {"color": "red"}},
        "car_red": {"query": "car", "filter": {"color": "red"}},
        "blue_over_3.2": {"query": "blue", "filter": {"score": {"$gt": 3.2}}},
        "apple_green_high": {
            "query": "apple",
            "filter": {"score": {"$gte": 4.0}, "color": "green"},
        },
        "car_in_docs_b": {"query": "car", "namespace": ("docs", "b")},
    }

    async def scenario(store) -> dict[str, Any]:
        _put_all(store, FILTER_DOCS)
        seen = {}
        for name, options in searches.items():
            options = dict(options)
            namespace = options.pop("namespace", ("docs",))
            seen[name] = ranked(await store.asearch(namespace, limit=10, **options))
        return seen

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference == {
        "apple_red": ("doc1", ["doc1", "doc2"]),
        "car_red": ("doc2", ["doc1", "doc2"]),
        "blue_over_3.2": ("doc4", ["doc1", "doc3", "doc4"]),
        "apple_green_high": ("doc3", ["doc3"]),
        "car_in_docs_b": ("doc4", ["doc3", "doc4"]),
    }


def test_search_with_a_query_pages_and_takes_any_query_text(stores):
    """Modelled on ``test_vector_search_pagination`` and ``test_vector_search_edge_cases``."""

    def scenario(store) -> dict[str, Any]:
        for n in range(5):
            store.put(("test",), f"doc{n}", {"text": f"test document number {n}"})
        first = store.search(("test",), query="test", limit=2)
        second = store.search(("test",), query="test", limit=2, offset=2)
        everything = store.search(("test",), query="test", limit=10)
        seen: dict[str, Any] = {
            "pages": [
                len(first),
                len(second),
                not {i.key for i in first} & {i.key for i in second},
            ],
            "everything": keys(everything),
            "scored": [item.score is not None for item in everything],
        }
        for query in ["", None, "test " * 100, "test!@#$%^&*()", "número 3 ✓"]:
            seen[repr(query)] = keys(store.search(("test",), query=query, limit=10))
        return seen

    reference, engram = stores.call(scenario)

    assert engram == reference
    assert reference["pages"] == [2, 2, True]
    assert reference["scored"] == [True] * 5


def test_an_overwrite_is_searched_by_its_new_text(stores):
    """Modelled on ``test_vector_update_with_embedding``: after an overwrite the item ranks by
    its new text, not its old."""

    def scenario(store) -> list[Any]:
        store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
        store.put(("test",), "doc2", {"text": "something about dogs"})
        store.put(("test",), "doc3", {"text": "text about birds"})
        before = store.search(("test",), query="Zany Xerxes", limit=3)
        store.put(("test",), "doc1", {"text": "new text about dogs"})
        after = store.search(("test",), query="Zany Xerxes", limit=3)
        new_text = store.search(("test",), query="new text about dogs", limit=3)
        return [before[0].key, [i.key for i in after].count("doc1"), new_text[0].key]

    reference, engram = stores.call(scenario)

    assert engram == reference == ["doc1", 1, "doc1"]


def test_an_item_put_with_index_false_is_not_ranked_but_fills_a_short_page(stores):
    """Modelled on the end of ``test_vector_update_with_embedding``: an item put with
    ``index=False`` is left out of a query's ranking, even by its own words, and only fills
    a page the ranked items leave short, unscored."""

    def scenario(store) -> list[Any]:
        for key, text in [("doc1", "zany zebra"), ("doc2", "about dogs"), ("doc3", "birds")]:
            store.put(("test",), key, {"text": text})
        store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
        full = store.search(("test",), query="new text about dogs", limit=3)
        short = store.search(("test",), query="new text about dogs", limit=5)
        return [
            keys(full),
            keys(short),
            (short[-1].key, short[-1].score),
            entry(store.get(("test",), "doc4")),
        ]

    reference, engram = stores.call(scenario)

    assert engram == reference
    assert reference[:3] == [
        ["doc1", "doc2", "doc3"],
        ["doc1", "doc2", "doc3", "doc4"],
        ("doc4", None),
    ]


def test_concurrent_async_writes_then_filtered_searches(stores):
    """Modelled on ``test_async_batched_vector_search_concurrent``: puts and deletes gathered
    at once, then searches with filters gathered at once."""
    colors = ["red", "blue", "green", "yellow", "purple"]
    things = ["apple", "car", "house", "book", "phone"]
    docs = [
        (
            f"doc{n}",
            {"text": f"{colors[n % 5]} {things[n % 5]}", "color": colors[n % 5], "index": n},
        )
        for n in range(15)
    ]
    searches: list[tuple[str, dict[str, Any]]] = [
        ("apple", {"color": "red"}),
        ("car", {"color": "blue"}),
        ("house", {"index": {"$gt": 7}}),
        ("phone", {"index": {"$lte": 10}}),
    ]

    async def scenario(store) -> list[Any]:
        await asyncio.gather(*(store.aput(("test",), key, value) for key, value in docs))
        await asyncio.gather(*(store.adelete(("test",), key) for key, _ in docs[10:]))
        results = await asyncio.gather(
            *(
                store.asearch(("test",), query=query, filter=condition, limit=20)
                for query, condition in searches
            )
        )
        return [keys(found) for found in results]

    reference, engram = stores.run(scenario)

    assert engram == reference
    assert reference == [
        ["doc0", "doc5"],
        ["doc1", "doc6"],
        ["doc8", "doc9"],
        [f"doc{n}" for n in range(10)],
    ]


# ------------------------------------------------------------------ what the issue demands


def test_a_put_is_found_by_the_next_search_with_a_query(stores):
    """Read-your-writes, as LangGraph's memory docs use a store: put a memory, then search the
    namespace by a question whose words the memory does not share; it is found at once (no
    wait for a background embedding)."""
    namespace = ("user_123", "memories")

    def scenario(store) -> list[Any]:
        store.put(namespace, "1", {"text": "I love pizza"})
        first = store.search(namespace, query="I'm hungry", limit=1)
        store.put(namespace, "2", {"text": "I am a plumber"})
        second = store.search(namespace, query="what is my job?", limit=5)
        return [keys(first), keys(second)]

    reference, engram = stores.call(scenario)

    assert engram == reference == [["1"], ["1", "2"]]


def test_a_query_search_ranks_every_item_of_its_namespace_among_many_other_memories(
    stores, engram_client, settings
):
    """The store's items are a small minority of the subject's memories (150 others, all
    sharing the query's words): a search of the namespace still ranks all of its items."""
    settings.MEMORY_WRITE_RATE_LIMIT = 10_000
    namespace = ("docs", "pizza")
    others = [f"pizza note {n}: the pizza oven runs hot" for n in range(150)]

    def scenario(store) -> list[Any]:
        for n in range(5):
            store.put(namespace, f"doc{n}", {"text": f"pizza recipe number {n}"})
        if store is stores.engram:
            for start in range(0, len(others), 100):
                engram_client.remember_many(others[start : start + 100])
        else:
            for n, text in enumerate(others):
                store.put(("notes",), f"note{n}", {"text": text})
        return [
            keys(store.search(namespace, query="pizza", limit=10)),
            keys(store.search(("docs",), query="pizza oven", limit=10)),
        ]

    reference, engram = stores.call(scenario)

    assert engram == reference == [[f"doc{n}" for n in range(5)]] * 2


def test_one_store_serves_one_event_loop_after_another_and_a_threads(stores):
    """A store used as scripts and worker threads use it: each call in an ``asyncio.run`` of
    its own, and one in a thread's own loop."""

    def steps(store) -> list[Any]:
        failures: list[BaseException] = []
        asyncio.run(store.aput(("prefs",), "editor", {"text": "helix"}))
        seen: list[Any] = [entry(asyncio.run(store.aget(("prefs",), "editor")))]

        def in_a_thread() -> None:
            try:
                asyncio.run(store.aput(("prefs",), "editor", {"text": "zed"}))
                seen.append(entry(asyncio.run(store.aget(("prefs",), "editor"))))
            except BaseException as error:
                failures.append(error)

        # A daemon thread joined with a bound: a client that mixes loops can hang.
        thread = threading.Thread(target=in_a_thread, daemon=True)
        thread.start()
        thread.join(timeout=60)
        seen.append(entries(asyncio.run(store.asearch(("prefs",), query="zed"))))
        seen.append(failures)
        return seen

    reference, engram = stores.call(steps)

    assert engram == reference
    assert reference[-2:] == [[(("prefs",), "editor", {"text": "zed"})], []]
