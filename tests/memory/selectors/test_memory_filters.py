"""Tag and metadata filters on recall and list: checked before anything runs, applied inside
the guarded scope in every mode and on the fallback path, so every matching row can rank."""

import pytest

from apps.core.db.filters import InvalidFilter, record_filter_parse
from apps.memory.models import Memory
from apps.memory.selectors import memory_list, memory_recall
from apps.memory.services import MemoryDraft, memory_embed_pending, memory_write_batch
from tests.memory.helpers import remember

pytestmark = pytest.mark.django_db

MODES = ["semantic", "keyword", "hybrid"]


def _texts(memories):
    return sorted(memory.text for memory in memories)


def _nested(keys):
    value: object = 1
    for key in reversed(keys):
        value = {key: value}
    return value


def _listed(tenant, raw, subject="a"):
    page = memory_list(
        tenant=tenant, subject_id=subject, narrowing=record_filter_parse(raw), limit=200
    )
    return _texts(page.results)


@pytest.fixture
def catalogue(tenant):
    """Five memories whose metadata and tags differ in every way a filter can test."""
    rows = [
        ("alpha", ["infra", "db"], {"kind": "note", "score": 3, "due": "2024-05-01"}),
        ("beta", ["infra"], {"kind": "task", "score": 7.5, "due": "2024-05-01T22:00:00-05:00"}),
        ("gamma", ["db"], {"kind": "task", "score": "9", "owner": {"team": "ops", "n": 2}}),
        ("delta", [], {"kind": None, "labels": ["x", "y"], "name": "Zoë"}),
        ("epsilon", ["misc"], {"name": "apple", "due": "not a date 2024-01-01"}),
    ]
    return [
        remember(tenant, "a", text, embed=False, tags=tags, metadata=metadata)
        for text, tags, metadata in rows
    ]


@pytest.mark.usefixtures("catalogue")
@pytest.mark.parametrize(
    ("_case", "raw", "expected"),
    [
        ("no_filter", None, ["alpha", "beta", "delta", "epsilon", "gamma"]),
        ("empty_filter", {}, ["alpha", "beta", "delta", "epsilon", "gamma"]),
        ("equal_string", {"metadata": {"kind": "task"}}, ["beta", "gamma"]),
        ("equal_number_any_spelling", {"metadata": {"score": 3.0}}, ["alpha"]),
        ("equal_null_or_missing", {"metadata": {"kind": None}}, ["delta", "epsilon"]),
        ("eq_operator", {"metadata": {"kind": {"$eq": "note"}}}, ["alpha"]),
        (
            "ne_keeps_missing",
            {"metadata": {"kind": {"$ne": "task"}}},
            ["alpha", "delta", "epsilon"],
        ),
        (
            "ne_null_means_present",
            {"metadata": {"kind": {"$ne": None}}},
            ["alpha", "beta", "gamma"],
        ),
        ("in", {"metadata": {"kind": {"$in": ["note", "nothing"]}}}, ["alpha"]),
        ("nin", {"metadata": {"kind": {"$nin": ["task", None]}}}, ["alpha"]),
        ("list_equals_exactly", {"metadata": {"labels": ["x", "y"]}}, ["delta"]),
        ("list_order_matters", {"metadata": {"labels": ["y", "x"]}}, []),
        ("list_prefix_is_not_equal", {"metadata": {"labels": ["x"]}}, []),
        ("nested_field", {"metadata": {"owner": {"team": "ops"}}}, ["gamma"]),
        ("nested_range", {"metadata": {"owner": {"n": {"$gte": 2}}}}, ["gamma"]),
        ("exists", {"metadata": {"due": {"$exists": True}}}, ["alpha", "beta", "epsilon"]),
        ("not_exists", {"metadata": {"due": {"$exists": False}}}, ["delta", "gamma"]),
        # A number compares numeric fields only: "9" is a string.
        ("number_gt", {"metadata": {"score": {"$gt": 3}}}, ["beta"]),
        ("number_between", {"metadata": {"score": {"$gte": 3, "$lt": 7.5}}}, ["alpha"]),
        # A string compares string fields in code-point order ("Z" < "a" < "o" < "Ö").
        ("string_gt", {"metadata": {"name": {"$gt": "B"}}}, ["delta", "epsilon"]),
        ("string_lt", {"metadata": {"name": {"$lt": "b"}}}, ["delta", "epsilon"]),
        ("string_lt_code_points", {"metadata": {"name": {"$lt": "Zz"}}}, ["delta"]),
        ("string_number_is_a_string", {"metadata": {"score": {"$gte": "8"}}}, ["gamma"]),
        # An ISO date compares instants: 22:00 at -05:00 is 03:00 UTC on May 2nd.
        ("date_after", {"metadata": {"due": {"$gt": "2024-05-01T12:00:00Z"}}}, ["beta"]),
        ("date_on_or_before", {"metadata": {"due": {"$lte": "2024-05-01"}}}, ["alpha"]),
        # "2024-06" is no ISO date, so that bound compares strings: both May values pass it.
        (
            "date_and_string",
            {"metadata": {"due": {"$gte": "2024-04-30", "$lt": "2024-06"}}},
            ["alpha", "beta"],
        ),
        (
            "date_with_offset",
            {"metadata": {"due": {"$lt": "2024-05-02T04:00:01+01:00"}}},
            ["alpha", "beta"],
        ),
        ("tag", {"tags": "infra"}, ["alpha", "beta"]),
        ("tags_all", {"tags": {"$all": ["infra", "db"]}}, ["alpha"]),
        ("tags_in", {"tags": {"$in": ["db", "misc"]}}, ["alpha", "epsilon", "gamma"]),
        ("tags_nin", {"tags": {"$nin": ["infra", "misc"]}}, ["delta", "gamma"]),
        ("tags_ne", {"tags": {"$ne": "db"}}, ["beta", "delta", "epsilon"]),
        (
            "implicit_and",
            {"tags": "db", "metadata": {"kind": "task"}},
            ["gamma"],
        ),
        (
            "explicit_and",
            {"$and": [{"metadata": {"kind": "task"}}, {"metadata": {"score": {"$lt": 8}}}]},
            ["beta"],
        ),
    ],
)
def test_list_keeps_what_the_filter_matches(tenant, _case, raw, expected):
    # Given a catalogue of metadata and tags / When listing through the filter
    # Then exactly the matching memories are listed
    assert _listed(tenant, raw) == expected


@pytest.mark.usefixtures("catalogue")
def test_a_date_range_spans_offsets(tenant):
    # Both May memories, one of them written at -05:00 (May 2nd in UTC); never the non-date
    raw = {"metadata": {"due": {"$gte": "2024-04-30", "$lt": "2024-06-01"}}}
    assert _listed(tenant, raw) == ["alpha", "beta"]


def test_filter_never_reaches_another_subject(tenant, other_tenant):
    remember(tenant, "a", "mine", embed=False, metadata={"kind": "x"})
    remember(tenant, "b", "theirs", embed=False, metadata={"kind": "x"})
    remember(other_tenant, "a", "elsewhere", embed=False, metadata={"kind": "x"})
    assert _listed(tenant, {"metadata": {"kind": "x"}}) == ["mine"]


@pytest.mark.parametrize(
    ("_case", "raw", "path"),
    [
        ("not_an_object", ["tags"], "filter"),
        ("unknown_key", {"text": "x"}, "filter.text"),
        ("nul_in_a_value", {"metadata": {"a": "x\x00"}}, "filter.metadata.a"),
        ("surrogate_in_a_tag", {"tags": {"$in": ["\ud800"]}}, "filter.tags.$in[0]"),
        ("tags_empty_list", {"tags": {"$in": []}}, "filter.tags.$in"),
        ("tag_not_a_string", {"tags": 5}, "filter.tags"),
        ("tag_too_long", {"tags": "x" * 65}, "filter.tags"),
        ("tag_range", {"tags": {"$gt": "a"}}, "filter.tags.$gt"),
        ("metadata_not_object", {"metadata": "x"}, "filter.metadata"),
        ("metadata_empty", {"metadata": {}}, "filter.metadata"),
        ("unknown_operator", {"metadata": {"a": {"$regex": "x"}}}, "filter.metadata.a.$regex"),
        ("mixed_operators_fields", {"metadata": {"a": {"$gt": 1, "b": 2}}}, "filter.metadata.a"),
        ("operator_without_field", {"metadata": {"$gt": 1}}, "filter.metadata.$gt"),
        ("empty_nested", {"metadata": {"a": {}}}, "filter.metadata.a"),
        ("range_bool", {"metadata": {"a": {"$gt": True}}}, "filter.metadata.a.$gt"),
        ("range_null", {"metadata": {"a": {"$lt": None}}}, "filter.metadata.a.$lt"),
        ("range_list", {"metadata": {"a": {"$lt": [1]}}}, "filter.metadata.a.$lt"),
        ("in_not_list", {"metadata": {"a": {"$in": "x"}}}, "filter.metadata.a.$in"),
        ("exists_not_bool", {"metadata": {"a": {"$exists": 1}}}, "filter.metadata.a.$exists"),
        ("and_not_list", {"$and": {"tags": "x"}}, "filter.$and"),
        ("and_empty_part", {"$and": [{}]}, "filter.$and[0]"),
        (
            "too_deep",
            {"metadata": _nested("abcdefghijkl")},
            "filter.metadata.a.b.c.d.e.f.g.h.i.j.k.l",
        ),
        ("list_too_long", {"tags": {"$in": [f"t{n}" for n in range(101)]}}, "filter.tags.$in"),
        (
            "too_many_conditions",
            {"metadata": {f"f{n}": n for n in range(65)}},
            "filter.metadata.f64",
        ),
        ("too_large", {"metadata": {"a": {"$in": ["x" * 100] * 90}}}, "filter"),
    ],
)
def test_a_bad_filter_is_refused_with_where_it_went_wrong(_case, raw, path):
    with pytest.raises(InvalidFilter) as caught:
        record_filter_parse(raw)
    assert caught.value.code == "invalid_filter"
    assert caught.value.http_status == 422
    assert caught.value.details == {"path": path}


# ----------------------------------------------------------------------------- recall


@pytest.fixture
def crowded(tenant):
    """150 memories that match the query better than any of the 5 tagged ones, written first
    so no tie-break favours the 5: without the filter the 5 are not in the top 100."""
    crowd = [
        MemoryDraft(
            text=f"Pizza night {n}: pizza, pizza and more pizza with the team.",
            tags=["crowd"],
            metadata={"group": "crowd"},
        )
        for n in range(150)
    ]
    wanted = [
        MemoryDraft(
            text=f"Item {n} mentions pizza once among many other unrelated words here.",
            tags=["lg:wanted"],
            metadata={"group": "wanted", "rank": n},
        )
        for n in range(5)
    ]
    memories, _turns = memory_write_batch(
        tenant=tenant, subject_id="a", memories=[*crowd, *wanted], turns=[]
    )
    memory_embed_pending(memory_ids=[str(memory.pk) for memory in memories])
    return [memory for memory in memories if memory.metadata.get("group") == "wanted"]


def _recall(tenant, mode, raw, limit=5, query="pizza"):
    return memory_recall(
        tenant=tenant,
        subject_id="a",
        query=query,
        limit=limit,
        mode=mode,
        narrowing=record_filter_parse(raw),
    )


@pytest.mark.parametrize("mode", MODES)
def test_without_a_filter_the_wanted_rows_lose_the_top_100(tenant, crowded, mode):
    # The control: the crowd outranks the five, so a filter applied after a cut finds none.
    result = _recall(tenant, mode, None, limit=100)
    wanted = {memory.pk for memory in crowded}
    assert [hit for hit in result.results if hit.memory.pk in wanted] == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("_case", "raw"),
    [
        ("tag", {"tags": "lg:wanted"}),
        ("metadata", {"metadata": {"group": "wanted"}}),
        ("range", {"metadata": {"rank": {"$gte": 0}}}),
    ],
)
def test_recall_ranks_every_row_the_filter_keeps(tenant, crowded, mode, _case, raw):
    # When recalling with a filter that keeps 5 of 155 / Then all 5 come back, and only them
    result = _recall(tenant, mode, raw, limit=10)
    assert sorted(hit.memory.pk for hit in result.results) == sorted(m.pk for m in crowded)
    assert result.meta["fallback"] is False


def test_fallback_applies_the_filter_too(tenant, crowded):
    # Given a tenant whose embedding provider is down
    tenant.embedding_provider = "openai"
    tenant.embedding_config = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    tenant.save()
    # When recalling with a filter / Then the fallback ranks inside the filter
    result = _recall(tenant, "hybrid", {"tags": {"$in": ["lg:wanted"]}}, limit=10)
    assert result.meta["fallback"] is True
    assert sorted(hit.memory.pk for hit in result.results) == sorted(m.pk for m in crowded)


@pytest.mark.parametrize("mode", MODES)
def test_a_filter_that_keeps_nothing_recalls_nothing(tenant, crowded, mode):
    result = _recall(tenant, mode, {"metadata": {"group": "nobody"}})
    assert result.results == []
    assert Memory.objects.filter(tenant=tenant).count() == 155


@pytest.mark.parametrize("mode", MODES)
def test_a_filter_is_compiled_once_and_kept_for_the_statements_that_run_it(tenant, catalogue, mode):
    memory_embed_pending(memory_ids=[str(memory.pk) for memory in catalogue])
    narrowing = record_filter_parse({"tags": {"$in": ["infra", "db"]}})

    first = memory_recall(
        tenant=tenant, subject_id="a", query="alpha beta", mode=mode, narrowing=narrowing
    )

    assert (
        {"alpha", "beta"}
        <= {hit.memory.text for hit in first.results}
        <= {
            "alpha",
            "beta",
            "gamma",
        }
    )
    assert len(narrowing.compiled) == 1
    # What runs is the kept clause, not a new compilation: a clause that keeps nothing, put in
    # its place, empties the next recall with the same filter.
    (using,) = narrowing.compiled
    narrowing.compiled[using] = ("(false)", ())
    again = memory_recall(
        tenant=tenant, subject_id="a", query="alpha beta", mode=mode, narrowing=narrowing
    )
    assert again.results == []
