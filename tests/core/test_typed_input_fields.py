"""Typed input fields keep the contract the app's own validators set.

These inputs (queries, session ids, a memory id, a re-scope, article ids) were once untyped
JSON fields checked only by the service or selector behind them. Every bad value below is
answered as it was then: the same status, code, message and details. Pinned before the
fields were typed, and kept since.
"""

import uuid
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from apps.core.api.fields import CheckedCharField

MEMORY_RECALL = "/api/v1/memory/recall"
MERGED = "/api/v1/recall"
SEARCH = "/api/v1/knowledge/search"
PROMOTE = "/api/v1/memory/promote"
GRADUATE = "/api/v1/memory/graduate"
UNKNOWN = "00000000-0000-4000-8000-000000000001"
REFERENCED = f"/api/v1/recall/{UNKNOWN}/referenced"

#: (code, message, details) of one error envelope.
Expected = tuple[str, str, dict[str, Any]]

BLANK_QUERY: Expected = ("invalid_query", "query must be a non-blank string.", {})
LONG_QUERY = ("query_too_long", "query is longer than 500 characters.")
BAD_SESSION: Expected = ("invalid_session_id", "session_id must be a non-empty string.", {})
BAD_PROMOTED_SESSION: Expected = (
    "invalid_session_id",
    "session_id must be a string of 1–200 characters.",
    {},
)
BAD_MEMORY_ID: Expected = ("invalid_memory_id", "memory_id must be a UUID.", {})
BAD_RE_SCOPE: Expected = ("invalid_re_scope", 're_scope must be "global" or omitted.', {})
BAD_ARTICLE_IDS = ("invalid_article_ids", "article_ids must be a non-empty list of article ids.")
TOO_MANY_IDS = ("too_many_article_ids", "At most 50 article ids per call.", {"max_ids": 50})


def _field_error(field, message):
    return ("validation_error", f"{field}: {message}", {"fields": {field: [message]}})


def _ids(count):
    return [str(uuid.UUID(int=n)) for n in range(count)]


QUERY_CASES = [
    ("null", None, BLANK_QUERY),
    ("number", 5, BLANK_QUERY),
    ("boolean", True, BLANK_QUERY),
    ("list", ["deploy"], BLANK_QUERY),
    ("object", {"q": 1}, BLANK_QUERY),
    ("empty", "", BLANK_QUERY),
    ("blank", "  \n\t ", BLANK_QUERY),
]

CASES = [
    *[
        (f"{name}_{case}", path, {"query": value}, expected)
        for name, path in (("memory", MEMORY_RECALL), ("merged", MERGED), ("search", SEARCH))
        for case, value, expected in QUERY_CASES
    ],
    ("memory_long_query", MEMORY_RECALL, {"query": "q" * 501}, (*LONG_QUERY, {"max_chars": 500})),
    ("merged_long_query", MERGED, {"query": "q" * 501}, (*LONG_QUERY, {"max_chars": 500})),
    ("search_long_query", SEARCH, {"query": "q" * 501}, (*LONG_QUERY, {"max_chars": 500})),
    *[
        (f"{name}_missing_query", path, {}, _field_error("query", "This field is required."))
        for name, path in (("memory", MEMORY_RECALL), ("merged", MERGED), ("search", SEARCH))
    ],
    *[
        (f"{name}_session_{case}", path, {"query": "x", "session_id": value}, BAD_SESSION)
        for name, path in (("merged", MERGED), ("search", SEARCH))
        for case, value in (
            ("number", 5),
            ("empty", ""),
            ("list", []),
            ("boolean", True),
            ("object", {"a": 1}),
        )
    ],
    *[
        (
            f"{name}_session_over_200_bytes",
            path,
            {"query": "x", "session_id": "é" * 101},
            ("invalid_session_id", "session_id is longer than 200 bytes.", {}),
        )
        for name, path in (("merged", MERGED), ("search", SEARCH))
    ],
    *[
        (f"promote_{case}", PROMOTE, {"session_id": value}, BAD_PROMOTED_SESSION)
        for case, value in (
            ("number", 5),
            ("empty", ""),
            ("blank", "   "),
            ("too_long", "s" * 201),
            ("list", []),
            ("boolean", True),
        )
    ],
    (
        "promote_null",
        PROMOTE,
        {"session_id": None},
        _field_error("session_id", "This field may not be null."),
    ),
    ("promote_missing", PROMOTE, {}, _field_error("session_id", "This field is required.")),
    *[
        (f"graduate_{case}", GRADUATE, {"memory_id": value}, BAD_MEMORY_ID)
        for case, value in (
            ("number", 5),
            ("not_a_uuid", "nope"),
            ("list", []),
            ("object", {}),
            ("boolean", True),
        )
    ],
    (
        "graduate_null",
        GRADUATE,
        {"memory_id": None},
        _field_error("memory_id", "This field may not be null."),
    ),
    ("graduate_missing", GRADUATE, {}, _field_error("memory_id", "This field is required.")),
    *[
        (f"re_scope_{case}", GRADUATE, {"memory_id": UNKNOWN, "re_scope": value}, BAD_RE_SCOPE)
        for case, value in (
            ("project", "project"),
            ("number", 5),
            ("empty", ""),
            ("list", ["global"]),
            ("boolean", True),
        )
    ],
    (
        "graduate_memory_id_before_re_scope",
        GRADUATE,
        {"memory_id": "nope", "re_scope": "project"},
        BAD_MEMORY_ID,
    ),
    *[
        (f"article_ids_{case}", REFERENCED, {"article_ids": value}, (*BAD_ARTICLE_IDS, {}))
        for case, value in (("number", 5), ("string", "abc"), ("object", {}), ("empty", []))
    ],
    (
        "article_ids_malformed",
        REFERENCED,
        {"article_ids": ["nope"]},
        (*BAD_ARTICLE_IDS, {"invalid": "nope"}),
    ),
    ("article_ids_51", REFERENCED, {"article_ids": _ids(51)}, TOO_MANY_IDS),
    # The count is checked before the ids are parsed.
    ("article_ids_51_one_bad", REFERENCED, {"article_ids": [*_ids(50), "nope"]}, TOO_MANY_IDS),
    (
        "article_ids_null",
        REFERENCED,
        {"article_ids": None},
        _field_error("article_ids", "This field may not be null."),
    ),
    (
        "article_ids_missing",
        REFERENCED,
        {},
        _field_error("article_ids", "This field is required."),
    ),
]


@pytest.fixture(autouse=True)
def _no_broker(mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")


@pytest.mark.parametrize(("_case", "path", "body", "expected"), CASES)
def test_a_bad_value_is_answered_as_the_apps_validator_answers_it(
    agent, _case, path, body, expected
):
    code, message, details = expected

    response = agent.post(path, body)

    assert response.status_code == 422
    assert response.json() == {"error": {"code": code, "message": message, "details": details}}


def test_well_formed_values_that_are_not_trimmed_are_served_as_sent(agent):
    promoted = agent.post(PROMOTE, {"session_id": " s1 "})
    merged = agent.post(MERGED, {"query": " tea ", "session_id": " "})
    searched = agent.post(SEARCH, {"query": " tea ", "session_id": " "})
    recalled = agent.post(MEMORY_RECALL, {"query": " tea "})
    graduated = agent.post(GRADUATE, {"memory_id": UNKNOWN, "re_scope": None})
    referenced = agent.post(REFERENCED, {"article_ids": [UNKNOWN, UNKNOWN.upper()]})

    assert (promoted.status_code, promoted.json()["data"]["session_id"]) == (202, " s1 ")
    assert (merged.status_code, searched.status_code, recalled.status_code) == (200, 200, 200)
    assert (graduated.status_code, graduated.json()["error"]["code"]) == (404, "not_found")
    assert referenced.json()["error"] == {
        "code": "not_surfaced",
        "message": "Only articles this search surfaced can be referenced; nothing was recorded.",
        "details": {"article_ids": [UNKNOWN]},
    }


LIMIT_ERROR = _field_error("limit", "Ensure this value is greater than or equal to 1.")


@pytest.mark.parametrize(
    ("_case", "path", "body", "expected"),
    [
        ("memory_query", MEMORY_RECALL, {"query": None, "limit": 0}, LIMIT_ERROR),
        ("merged_query", MERGED, {"query": None, "limit": 0}, LIMIT_ERROR),
        ("search_query", SEARCH, {"query": None, "limit": 0}, LIMIT_ERROR),
        ("merged_session", MERGED, {"query": "x", "limit": 0, "session_id": 5}, LIMIT_ERROR),
        ("search_session", SEARCH, {"query": "x", "limit": 0, "session_id": 5}, LIMIT_ERROR),
        (
            "graduate",
            GRADUATE,
            {"memory_id": None, "re_scope": "project"},
            _field_error("memory_id", "This field may not be null."),
        ),
    ],
)
def test_other_bad_fields_are_reported_before_the_checked_ones(agent, _case, path, body, expected):
    code, message, details = expected

    response = agent.post(path, body)

    assert response.status_code == 422
    assert response.json() == {"error": {"code": code, "message": message, "details": details}}


def test_the_schema_types_the_checked_fields():
    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]

    def props(name):
        return schemas[name]["properties"]

    for name in ("MemoryRecallInputRequest", "RecallInputRequest", "KnowledgeSearchInputRequest"):
        query = props(name)["query"]
        assert (query["type"], query["minLength"], query["maxLength"]) == ("string", 1, 500)
        assert "nullable" not in query
    for name in ("RecallInputRequest", "KnowledgeSearchInputRequest"):
        session = props(name)["session_id"]
        assert (session["type"], session["nullable"]) == ("string", True)
    promoted = props("MemoryPromoteInputRequest")["session_id"]
    assert (promoted["type"], promoted["minLength"], promoted["maxLength"]) == ("string", 1, 200)
    memory_id = props("MemoryGraduateInputRequest")["memory_id"]
    assert (memory_id["type"], memory_id["format"]) == ("string", "uuid")
    re_scope = props("MemoryGraduateInputRequest")["re_scope"]
    assert re_scope["nullable"] is True
    assert any(
        schemas[part["$ref"].rsplit("/", 1)[-1]].get("enum") == ["global"]
        for part in re_scope.get("oneOf", re_scope.get("allOf", []))
        if "$ref" in part
    )
    article_ids = props("RecallReferencedInputRequest")["article_ids"]
    assert (article_ids["type"], article_ids["minItems"], article_ids["maxItems"]) == (
        "array",
        1,
        50,
    )
    assert article_ids["items"] == {"type": "string", "format": "uuid"}


def test_a_checked_field_refuses_a_serializer_that_would_not_check_it():
    class Unchecked(serializers.Serializer):
        query = CheckedCharField(check=str)

    with pytest.raises(TypeError, match="CheckedInputSerializer"):
        _ = Unchecked(data={"query": "x"}).fields
