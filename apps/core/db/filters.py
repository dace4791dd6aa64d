"""Narrowing a read by tags and metadata: the filter language of every row with ``tags`` and
``metadata`` (memory recall and list use it).

A filter is a JSON object (docs/recall.md, "Filters"); every condition in it must hold:

* ``"tags"``: a tag the row carries (``"tags": "infra"``), or an object of operators:
  ``$all`` (carries every one), ``$in`` (carries at least one), ``$nin`` (carries none),
  ``$eq`` (carries it), ``$ne`` (does not carry it).
* ``"metadata"``: an object mirroring the metadata's shape. A key names a field; its value
  is either a nested object of fields (descend), an object of operators, or a JSON value the
  field must equal (a list equals a list of the same items in the same order; ``null``
  matches a null or missing field). Operators: ``$eq``, ``$ne``, ``$in``, ``$nin`` (any JSON
  values), ``$exists`` (a boolean), and ``$gt``, ``$gte``, ``$lt``, ``$lte``, which compare as
  the type of their operand: a number against numeric fields only, an ISO 8601 date or
  date-time against fields holding one (as instants; no offset means UTC), any other string
  against string fields in code-point order. A field of another type never matches a range.
* ``"$and"``: a list of filters, all of which must hold.

The filter is checked once, before anything runs, and bounded (depth, conditions, list
lengths, size): a bad one is 422 ``invalid_filter`` naming where it went wrong. It becomes a
``Q`` over the row alone, so the caller puts it in the same WHERE as the scope: every
matching row can rank, none is cut before it is filtered. Equality is JSON containment
(``metadata @> …``, ``tags @> …``, ``tags && …``), which the GIN indexes serve.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from django.db.models import BooleanField, F, Q
from django.db.models.expressions import Expression
from typing_extensions import override

from apps.core.exceptions import CoreErrorCode, ValidationFailed

#: How deep a filter may nest (objects and lists, from the filter itself).
FILTER_MAX_DEPTH = 12
#: How many conditions (a field's value or one operator) a filter may hold.
FILTER_MAX_CONDITIONS = 64
#: How many items an ``$in``/``$nin``/``$all``/``$and`` list may hold.
FILTER_MAX_LIST_ITEMS = 100
#: How large a filter may be, serialized.
FILTER_MAX_BYTES = 8_192

EQUALITY_OPERATORS = ("$eq", "$ne")
SET_OPERATORS = ("$in", "$nin")
RANGE_OPERATORS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
METADATA_OPERATORS = (*EQUALITY_OPERATORS, *SET_OPERATORS, *RANGE_OPERATORS, "$exists")
TAG_OPERATORS = ("$all", "$in", "$nin", "$eq", "$ne")
TAG_MAX_CHARS = 64

# An ISO 8601 date, or a date-time with an optional offset: the strings a range compares as
# instants. Checked on both sides (the database checks the stored value the same way).
ISO_INSTANT_PATTERN = (
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"
)
_ISO_INSTANT = re.compile(ISO_INSTANT_PATTERN)
# Text Postgres cannot store (NUL) or that is not text (a lone surrogate): JSON sent as a
# query-string parameter can spell them as escapes the request's own checks never see.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")

KIND_NUMBER, KIND_INSTANT, KIND_STRING = "number", "instant", "string"

#: The filter language in one paragraph, for the API schema and the MCP tools.
FILTER_HELP = (
    'Narrow by tags and metadata, e.g. {"tags": {"$in": ["infra", "db"]}, "metadata": '
    '{"kind": "task", "score": {"$gte": 3}, "due": {"$lt": "2025-01-01"}}}. "tags": a tag, or '
    '$all/$in/$nin/$eq/$ne. "metadata": fields as nested objects; a value is a JSON value to '
    "equal (null: null or missing) or operators $eq/$ne/$in/$nin/$exists and $gt/$gte/$lt/$lte, "
    "which compare as the operand's type (a number with numbers, an ISO 8601 date as an "
    'instant, other strings in code-point order). "$and": a list of filters. Every condition '
    f"must hold. At most {FILTER_MAX_CONDITIONS} conditions, {FILTER_MAX_DEPTH} levels, "
    f"{FILTER_MAX_LIST_ITEMS} items a list, {FILTER_MAX_BYTES} bytes; otherwise 422 "
    'invalid_filter (details.path says where). docs/recall.md, "Filters".'
)


class InvalidFilter(ValidationFailed):
    default_code: str = CoreErrorCode.INVALID_FILTER


@dataclass(frozen=True)
class RecordFilter:
    """A checked filter: the ``Q`` that narrows the rows, and the filter as given."""

    q: Q
    raw: Mapping[str, Any]
    #: The filter compiled to SQL, by whoever runs it (keyed by its own choice, e.g. the
    #: database alias): a recall runs one filter in several statements and compiles it once.
    compiled: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _fail(message: str, path: str) -> InvalidFilter:
    return InvalidFilter(f"filter{path}: {message}", details={"path": f"filter{path}"})


def parse_instant(value: str) -> datetime | None:
    """``value`` as a UTC instant if it is an ISO 8601 date or date-time, else None."""
    if not _ISO_INSTANT.match(value):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace(" ", "T").replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value), datetime.min.time())
        except ValueError:
            return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


class _Budget:
    def __init__(self) -> None:
        self.conditions = 0

    def spend(self, path: str) -> None:
        self.conditions += 1
        if self.conditions > FILTER_MAX_CONDITIONS:
            raise _fail(f"more than {FILTER_MAX_CONDITIONS} conditions.", path)


def _depth(value: Any, path: str, depth: int = 0) -> None:
    """Bounds the nesting and the lists, and refuses what is not storable text."""
    if depth > FILTER_MAX_DEPTH:
        raise _fail(f"nested more than {FILTER_MAX_DEPTH} levels deep.", path)
    if isinstance(value, str) and _NOT_TEXT.search(value):
        raise _fail("holds a NUL character or an unpaired surrogate.", path)
    if isinstance(value, dict):
        for key, item in value.items():
            if _NOT_TEXT.search(str(key)):
                raise _fail("a key holds a NUL character or an unpaired surrogate.", path)
            _depth(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        if len(value) > FILTER_MAX_LIST_ITEMS:
            raise _fail(f"a list of more than {FILTER_MAX_LIST_ITEMS} items.", path)
        for index, item in enumerate(value):
            _depth(item, f"{path}[{index}]", depth + 1)


def record_filter_parse(raw: object) -> RecordFilter | None:
    """Check ``raw`` (a filter object, or None/{} for no filter) and build its ``Q``; a bad
    filter raises 422 ``invalid_filter`` with ``details.path`` where it went wrong."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("must be a JSON object.", "")
    # Walked first: only text that is text can be measured in UTF-8.
    _depth(raw, "")
    size = len(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > FILTER_MAX_BYTES:
        raise _fail(f"{size} bytes serialized; at most {FILTER_MAX_BYTES}.", "")
    if not raw:
        return None
    return RecordFilter(q=_filter(raw, "", _Budget()), raw=raw)


def record_filter_parse_text(text: object) -> RecordFilter | None:
    """:func:`record_filter_parse` of a filter sent as JSON text (a query-string parameter);
    text that is not JSON is ``invalid_filter`` too."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, str) or len(text.encode("utf-8")) > FILTER_MAX_BYTES:
        raise _fail(f"must be a JSON object of at most {FILTER_MAX_BYTES} bytes.", "")
    try:
        raw = json.loads(text)
    except ValueError:
        raise _fail("is not valid JSON.", "") from None
    return record_filter_parse(raw)


def _filter(raw: Any, path: str, budget: _Budget) -> Q:
    if not isinstance(raw, dict) or not raw:
        raise _fail("must be a non-empty JSON object.", path)
    q = Q()
    for key, value in raw.items():
        where = f"{path}.{key}"
        if key == "tags":
            q &= _tags(value, where, budget)
        elif key == "metadata":
            if not isinstance(value, dict) or not value:
                raise _fail("must be a non-empty object of metadata fields.", where)
            q &= _fields(value, (), where, budget)
        elif key == "$and":
            if not isinstance(value, list) or not value:
                raise _fail("must be a non-empty list of filters.", where)
            for index, part in enumerate(value):
                q &= _filter(part, f"{where}[{index}]", budget)
        else:
            raise _fail('unknown key; a filter takes "tags", "metadata" and "$and".', where)
    return q


# ----------------------------------------------------------------------------- tags


def _tag(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value or len(value) > TAG_MAX_CHARS:
        raise _fail(f"a tag is a string of 1-{TAG_MAX_CHARS} characters.", path)
    return value


def _tag_list(value: Any, path: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise _fail("must be a non-empty list of tags.", path)
    return [_tag(item, f"{path}[{index}]") for index, item in enumerate(value)]


def _tags(value: Any, path: str, budget: _Budget) -> Q:
    if not isinstance(value, dict):
        budget.spend(path)
        return Q(tags__contains=[_tag(value, path)])
    if not value:
        raise _fail("must be a tag or a non-empty object of operators.", path)
    q = Q()
    for operator, operand in value.items():
        where = f"{path}.{operator}"
        budget.spend(where)
        if operator == "$all":
            q &= Q(tags__contains=_tag_list(operand, where))
        elif operator == "$in":
            q &= Q(tags__overlap=_tag_list(operand, where))
        elif operator == "$nin":
            q &= ~Q(tags__overlap=_tag_list(operand, where))
        elif operator == "$eq":
            q &= Q(tags__contains=[_tag(operand, where)])
        elif operator == "$ne":
            q &= ~Q(tags__contains=[_tag(operand, where)])
        else:
            raise _fail(f"unknown tag operator; use one of {', '.join(TAG_OPERATORS)}.", where)
    return q


# ----------------------------------------------------------------------------- metadata


def _is_operators(value: Any) -> bool:
    return isinstance(value, dict) and any(str(key).startswith("$") for key in value)


def _fields(raw: dict[str, Any], prefix: tuple[str, ...], path: str, budget: _Budget) -> Q:
    q = Q()
    for key, value in raw.items():
        where = f"{path}.{key}"
        if key.startswith("$"):
            raise _fail("an operator needs a field: {field: {operator: value}}.", where)
        field = (*prefix, key)
        if _is_operators(value):
            if not all(str(name).startswith("$") for name in value):
                raise _fail("an object mixes operators with field names.", where)
            for operator, operand in value.items():
                budget.spend(f"{where}.{operator}")
                q &= _operator(field, operator, operand, f"{where}.{operator}")
        elif isinstance(value, dict):
            if not value:
                raise _fail("an empty object matches nothing in particular; remove it.", where)
            q &= _fields(value, field, where, budget)
        else:
            budget.spend(where)
            q &= _equals(field, value)
    return q


def _nested(field: Sequence[str], value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for the field ``a.b``: the object a containment test reads."""
    nested: Any = value
    for key in reversed(field):
        nested = {key: nested}
    return dict(nested)


def _equals(field: tuple[str, ...], value: Any) -> Q:
    """The field equals ``value`` as JSON; ``null`` also matches a missing field."""
    if value is None:
        return Q(JsonFieldCompare(field, "null", None))
    contains = Q(metadata__contains=_nested(field, value))
    if isinstance(value, dict | list):
        # Containment is how an index finds the rows; equality at the path is what holds
        # (containment alone would also accept a longer list, or an object with more keys).
        return contains & Q(JsonFieldCompare(field, "json", value))
    return contains


def _operator(field: tuple[str, ...], operator: str, operand: Any, path: str) -> Q:
    if operator == "$eq":
        return _equals(field, operand)
    if operator == "$ne":
        return ~_equals(field, operand)
    if operator in SET_OPERATORS:
        if not isinstance(operand, list) or not operand:
            raise _fail("must be a non-empty list of values.", path)
        any_of = Q()
        for value in operand:
            any_of |= _equals(field, value)
        return any_of if operator == "$in" else ~any_of
    if operator == "$exists":
        if not isinstance(operand, bool):
            raise _fail("must be true or false.", path)
        present = Q(JsonFieldCompare(field, "exists", None))
        return present if operand else ~present
    if operator in RANGE_OPERATORS:
        return Q(JsonFieldCompare(field, _range_kind(operand, path), operand, operator=operator))
    raise _fail(f"unknown operator; use one of {', '.join(METADATA_OPERATORS)}.", path)


def _range_kind(operand: Any, path: str) -> str:
    if isinstance(operand, bool) or not isinstance(operand, int | float | str):
        raise _fail(
            "a range compares a number or a string (an ISO 8601 date compares as one).", path
        )
    if isinstance(operand, str):
        return KIND_INSTANT if parse_instant(operand) is not None else KIND_STRING
    return KIND_NUMBER


class JsonFieldCompare(Expression):
    """One test of a metadata field that containment cannot express, as a boolean SQL
    expression over the row's ``metadata`` (never NULL, so ``NOT`` of it is exact).

    Kinds: ``null`` (null or missing), ``json`` (equal as JSON), ``exists``, and the ranges
    ``number`` / ``instant`` / ``string``, each a CASE that compares only a field of the
    operand's type (a CASE, so a field of another type is never cast: Postgres may evaluate
    the operands of AND in any order).
    """

    output_field = BooleanField()
    conditional = True

    def __init__(self, field: Sequence[str], kind: str, operand: Any, operator: str = "") -> None:
        super().__init__(output_field=BooleanField())
        self.path = list(field)
        self.kind = kind
        self.operand = operand
        self.operator = operator
        self.column: Any = F("metadata")

    @override
    def get_source_expressions(self) -> list[Any]:
        return [self.column]

    @override
    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        (self.column,) = exprs

    @override
    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:  # type: ignore[override]
        column, column_params = compiler.compile(self.column)
        if column_params:  # pragma: no cover - a column reference binds nothing
            raise ValueError("a metadata column with parameters cannot be tested here")
        value = f"({column} #> %s::text[])"
        path = [self.path]
        if self.kind == "null":
            return f"coalesce({value}, 'null'::jsonb) = 'null'::jsonb", path
        if self.kind == "exists":
            return f"({value} IS NOT NULL)", path
        if self.kind == "json":
            return f"coalesce({value} = %s::jsonb, false)", [*path, json.dumps(self.operand)]
        sign = RANGE_OPERATORS[self.operator]
        if self.kind == KIND_NUMBER:
            sql = (
                f"CASE WHEN jsonb_typeof({value}) = 'number' "
                f"THEN ({value})::numeric {sign} %s::numeric ELSE false END"
            )
            return sql, [*path, *path, str(self.operand)]
        text = f"({column} #>> %s::text[])"
        if self.kind == KIND_INSTANT:
            # The stored string must look like an ISO date too, and be a valid one, before
            # it is cast; the session's time zone is UTC, so a time without offset is UTC.
            sql = (
                f"CASE WHEN jsonb_typeof({value}) = 'string' AND {text} ~ %s "
                f"AND pg_input_is_valid({text}, 'timestamptz') "
                f"THEN {text}::timestamptz {sign} %s::timestamptz ELSE false END"
            )
            instant = parse_instant(str(self.operand))
            assert instant is not None  # noqa: S101 - the kind was chosen by parsing it
            params = [*path, *path, ISO_INSTANT_PATTERN, *path, *path, instant.isoformat()]
            return sql, params
        sql = (
            f"CASE WHEN jsonb_typeof({value}) = 'string' "
            f'THEN {text} COLLATE "C" {sign} %s COLLATE "C" ELSE false END'
        )
        return sql, [*path, *path, str(self.operand)]
