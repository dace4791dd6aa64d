"""Recall's scope: the guarded (tenant, subject) predicate, and the statements around it.

Every recall statement (the exact scan, its size check, the ANN scan, the completion, the
BM25 ranking) is assembled around one WHERE clause that Django compiled from a queryset the
structural guard (:func:`apps.core.repos.heavy_read_memories`) accepted. Assembling the rest
of each statement by hand instead of through the queryset compiler is the hot path's largest
saving: compiling the annotated, ordered query cost more than the scan itself.

The clause depends only on the query's *shape* (with or without a project, with or without
superseded rows; embedded, any or pending rows), so it is built, guarded and compiled once
per shape and process, with placeholder values, and each recall binds its own values into the
positions the placeholders held (:func:`recall_scope`). Building and compiling the queryset
per call was a third of a recall's time (docs/memory.md, "Recall latency").
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Q
from django.db.models.expressions import Col

from apps.core.db.cursors import server_bound_cursor
from apps.core.db.filters import RecordFilter
from apps.core.db.rows import instances_are_plain, model_from_row
from apps.core.repos import ScopeViolation, heavy_read_memories
from apps.core.vectors import VectorParam
from apps.memory.models import Memory
from apps.memory.selectors.listing import LIST_DEFERRED_FIELDS
from apps.memory.selectors.validity import in_time
from apps.projects.scoping import project_partition

# Placeholder values for the once-per-shape compile. They only need to be told apart from
# each other (and from any constant Django puts in the clause) when the compiled parameters
# are mapped back to the slots they fill.
_TENANT_PLACEHOLDER = uuid.UUID("00000000-0000-4000-8000-00000000a001")
_SUBJECT_PLACEHOLDER = "\x1frecall-scope-subject\x1f"
_PROJECT_PLACEHOLDER = uuid.UUID("00000000-0000-4000-8000-00000000a003")
_AS_OF_PLACEHOLDER = datetime(1901, 2, 3, 4, 5, 6, 789012, tzinfo=UTC)
_MODEL_PLACEHOLDER = "\x1frecall-scope-model\x1f"
TENANT, SUBJECT, PROJECT, AS_OF, MODEL = "tenant", "subject", "project", "as_of", "model"

#: Which of the subject's rows a scope covers. The vector leg can only rank embedded rows; the
#: keyword leg ranks every row, so a memory is findable by its words the moment its write
#: commits, before its embedding lands (read-your-writes); ``pending`` is the rows still
#: waiting for a vector, which recall counts (``meta.pending_searched``). ``vectors`` is what
#: the vector leg ranks: the embedded rows whose vector the query's model made. A row embedded
#: by another model (before a model change, until the background migration re-embeds it) is
#: in ``embedded`` but not in ``vectors``: its cosine to the query would mean nothing, so only
#: the keyword leg finds it, as it finds a pending row.
ROWS_EMBEDDED, ROWS_ANY, ROWS_PENDING, ROWS_VECTORS = "embedded", "any", "pending", "vectors"
_ROWS_FILTERS = {
    ROWS_EMBEDDED: Q(embedding__isnull=False),
    ROWS_ANY: Q(),
    ROWS_PENDING: Q(embedding__isnull=True),
}


def _rows_filter(rows: str, embedding_model: str | None) -> Q:
    if rows != ROWS_VECTORS:
        return _ROWS_FILTERS[rows]
    if not embedding_model:
        raise ScopeViolation("the vector leg's scope must name the query's model")
    return Q(embedding__isnull=False) & Q(embedding_model=embedding_model)


@dataclass(frozen=True)
class CompiledScope:
    """A WHERE clause over memory rows and its parameters, for one alias."""

    where: str
    params: tuple[Any, ...]
    using: str
    table: str


@dataclass(frozen=True)
class _ScopeTemplate:
    scope: CompiledScope
    #: Per parameter of ``scope.params``: which caller value it takes, or None (a constant).
    slots: tuple[str | None, ...]


def compile_scope(queryset: Any) -> CompiledScope | None:
    """The guarded ``queryset``'s WHERE clause; ``None`` when it can match nothing (Django
    proves it while compiling). A clause that needs a join is refused: the hand-built FROM
    names only the memory table, so running it would widen the rows, never narrow them."""
    query = queryset.query
    # Aliases with no references are joins Django trimmed (FK IS NULL reads the column).
    if sum(1 for count in query.alias_refcount.values() if count) != 1:
        raise ScopeViolation("recall's scope must filter memory rows only, without joins")
    connection = connections[queryset.db]
    compiler = query.get_compiler(using=queryset.db)
    try:
        where, params = compiler.compile(query.where)
    except EmptyResultSet:
        return None
    return CompiledScope(
        where=where,
        params=tuple(params),
        using=queryset.db,
        table=connection.ops.quote_name(Memory._meta.db_table),
    )


def scoped_memories(
    *,
    tenant_id: Any,
    subject_id: str,
    project_id: uuid.UUID | None,
    include_superseded: bool,
    rows: str = ROWS_EMBEDDED,
    as_of: datetime | None = None,
    embedding_model: str | None = None,
) -> Any:
    """The subject's ``rows`` (embedded, any, or pending; or ``vectors``: embedded by
    ``embedding_model``; live only, unless ``include_superseded``; valid at ``as_of`` when
    given) in the project partition, through the heavy-read guard."""
    queryset = Memory.objects.filter(
        project_partition(project_id=project_id),
        in_time(include_superseded=include_superseded, as_of=as_of),
        _rows_filter(rows, embedding_model),
        tenant_id=tenant_id,
        subject_id=subject_id,
    )
    return heavy_read_memories(queryset, tenant_id=tenant_id, subject_id=subject_id)


@functools.cache
def _template(
    *, with_project: bool, include_superseded: bool, rows: str, with_as_of: bool = False
) -> _ScopeTemplate:
    queryset = scoped_memories(
        tenant_id=_TENANT_PLACEHOLDER,
        subject_id=_SUBJECT_PLACEHOLDER,
        project_id=_PROJECT_PLACEHOLDER if with_project else None,
        include_superseded=include_superseded,
        rows=rows,
        as_of=_AS_OF_PLACEHOLDER if with_as_of else None,
        embedding_model=_MODEL_PLACEHOLDER if rows == ROWS_VECTORS else None,
    )
    scope = compile_scope(queryset)
    if scope is None:  # pragma: no cover - the scope filters cannot prove emptiness
        raise ScopeViolation("recall's scope compiled to an empty clause")
    placeholders: dict[Any, str] = {
        _TENANT_PLACEHOLDER: TENANT,
        _SUBJECT_PLACEHOLDER: SUBJECT,
        _PROJECT_PLACEHOLDER: PROJECT,
        _AS_OF_PLACEHOLDER: AS_OF,
        _MODEL_PLACEHOLDER: MODEL,
    }
    slots = tuple(placeholders.get(param) for param in scope.params)
    expected = (
        {TENANT, SUBJECT}
        | ({PROJECT} if with_project else set())
        | ({AS_OF} if with_as_of else set())
        | ({MODEL} if rows == ROWS_VECTORS else set())
    )
    if set(slots) - {None} != expected:
        # Every caller value must land somewhere, or a recall would run another scope's clause.
        raise ScopeViolation(f"recall's compiled scope binds {sorted(filter(None, slots))}")
    return _ScopeTemplate(scope=scope, slots=slots)


def recall_scope(
    *,
    tenant_id: Any,
    subject_id: str,
    project_id: uuid.UUID | None,
    include_superseded: bool,
    rows: str = ROWS_EMBEDDED,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
    embedding_model: str | None = None,
) -> CompiledScope:
    """The compiled, guarded scope for one recall: the shape's template with the caller's
    tenant, subject, project, ``as_of`` and (for ``vectors``) ``embedding_model`` bound where
    the template's placeholders were. The
    time filter is part of the WHERE every statement runs, so a ranking's top-k is taken among
    the rows valid then, never cut first and filtered after; so is ``narrowing`` (a tag and
    metadata filter), ANDed to the template's clause."""
    template = _template(
        with_project=project_id is not None,
        include_superseded=include_superseded and as_of is None,
        rows=rows,
        with_as_of=as_of is not None,
    )
    if rows == ROWS_VECTORS and not embedding_model:
        raise ScopeViolation("the vector leg's scope must name the query's model")
    values = {
        TENANT: tenant_id,
        SUBJECT: subject_id,
        PROJECT: project_id,
        AS_OF: as_of,
        MODEL: embedding_model,
    }
    params = tuple(
        constant if slot is None else values[slot]
        for slot, constant in zip(template.slots, template.scope.params, strict=True)
    )
    scope = template.scope
    where = scope.where
    if narrowing is not None:
        extra, extra_params = _narrowing_clause(narrowing, scope.using)
        where, params = f"{where} AND {extra}", (*params, *extra_params)
    return CompiledScope(where=where, params=params, using=scope.using, table=scope.table)


def _narrowing_clause(narrowing: RecordFilter, using: str) -> tuple[str, tuple[Any, ...]]:
    """A filter's WHERE over the memory table alone, parenthesised so it ANDs as one term.
    Compiled once per filter (filters vary too much to template), then kept on it: a recall
    runs its filter in each of its legs' statements."""
    kept = narrowing.compiled.get(using)
    if kept is not None:
        return kept
    compiled = compile_scope(Memory.objects.using(using).filter(narrowing.q))
    # Django proves some filters match nothing while compiling them.
    clause = ("(false)", ()) if compiled is None else (f"({compiled.where})", compiled.params)
    narrowing.compiled[using] = clause
    return clause


def count_rows(scope: CompiledScope) -> int:
    """How many rows ``scope`` covers (one statement, parameters bound server-side)."""
    with server_bound_cursor(scope.using) as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {scope.table} WHERE {scope.where}",  # noqa: S608
            scope.params,
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def reset_scope_templates() -> None:
    """Forget the compiled templates (tests that replace the guard)."""
    _template.cache_clear()


@dataclass(frozen=True)
class _RowShape:
    """What recall selects of a memory row and how Django turns it back into a ``Memory``."""

    select_list: str
    field_names: list[str]
    # (position, expression, converters) for the columns that need one (e.g. JSON).
    converters: list[tuple[int, Col, list[Any]]]


@functools.cache
def _row_shape(using: str) -> _RowShape:
    """Every column but the vector (nothing downstream reads it; parsing it costs), once per
    process: resolving columns and converters per query is what ``raw()`` would repeat."""
    connection = connections[using]
    quote = connection.ops.quote_name
    table = Memory._meta.db_table
    fields = [
        field for field in Memory._meta.concrete_fields if field.name not in LIST_DEFERRED_FIELDS
    ]
    converters: list[tuple[int, Col, list[Any]]] = []
    for position, model_field in enumerate(fields):
        column = Col(table, model_field)
        found = connection.ops.get_db_converters(column) + model_field.get_db_converters(connection)
        if found:
            converters.append((position, column, found))
    return _RowShape(
        select_list=", ".join(f"{quote(table)}.{quote(str(field.column))}" for field in fields),
        field_names=[field.attname for field in fields],
        converters=converters,
    )


def select_list(using: str) -> str:
    """The memory columns recall statements select (all but the vector), table-qualified."""
    return _row_shape(using).select_list


def quote(using: str, name: str) -> str:
    return str(connections[using].ops.quote_name(name))


def fetch_scored(
    scope: CompiledScope, sql: str, params: Sequence[Any], *, columns: int = 1
) -> list[tuple[Memory, tuple[Any, ...]]]:
    """Run a statement selecting :func:`select_list` plus ``columns`` (0 or more) trailing
    values; rows come back as ``(Memory, values)``, the instances Django's own iterators build
    (the fields' converters, then ``from_db``'s instance, by
    :func:`~apps.core.db.rows.model_from_row`), without ``raw()``'s per-query column
    resolution. Parameters are bound server-side (:mod:`apps.core.db.cursors`)."""
    shape = _row_shape(scope.using)
    connection = connections[scope.using]
    with server_bound_cursor(scope.using) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    scored = []
    plain = instances_are_plain(Memory)
    for row in rows:
        split = len(row) - columns
        values = list(row[:split])
        for position, column, converters in shape.converters:
            for converter in converters:
                values[position] = converter(values[position], column, connection)
        memory = model_from_row(
            Memory, using=scope.using, attnames=shape.field_names, values=values, plain=plain
        )
        scored.append((memory, tuple(row[split:])))
    return scored


def fetch_ranked(
    scope: CompiledScope, sql: str, params: Sequence[Any]
) -> list[tuple[Memory, float]]:
    """:func:`fetch_scored` with one score column, as a float."""
    return [(memory, float(values[0])) for memory, values in fetch_scored(scope, sql, params)]


def fetch_values(scope: CompiledScope, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Run a statement that selects plain values (ids and scores), not memory rows."""
    with server_bound_cursor(scope.using) as cursor:
        cursor.execute(sql, params)
        return [tuple(row) for row in cursor.fetchall()]


def fetch_rows(
    scope: CompiledScope,
    ids: Sequence[Any],
    *,
    counting: CompiledScope,
    vector: VectorParam,
    embedding_model: str,
) -> tuple[dict[Any, Memory], dict[Any, float | None], int]:
    """The rows of ``ids`` that are in ``scope``, by id, each one's cosine similarity to
    ``vector`` (None for a row without a vector, or whose vector another model than
    ``embedding_model``, the query's, made), and how many rows ``counting`` covers: a
    ranking that read ids only (the legs of ``hybrid``) reads its winners' rows alone, under
    the same guarded clause, and the count rides in the same statement."""
    if not ids:
        return {}, {}, count_rows(counting)
    table, pk = scope.table, quote(scope.using, "id")
    embedding = quote(scope.using, "embedding")
    model = quote(scope.using, "embedding_model")
    sql = (
        f"SELECT {select_list(scope.using)}, "  # noqa: S608
        f"CASE WHEN {table}.{model} = %s THEN 1 - ({table}.{embedding} <=> %s) END, "
        f"(SELECT count(*) FROM {table} WHERE {counting.where}) FROM {table} "
        f"WHERE {table}.{pk} = ANY(%s) AND {scope.where}"
    )
    rows = fetch_scored(
        scope,
        sql,
        [embedding_model, vector, *counting.params, list(ids), *scope.params],
        columns=2,
    )
    if not rows:  # every winner was forgotten since it was ranked
        return {}, {}, count_rows(counting)
    similarities = {
        memory.pk: None if similarity is None else float(similarity)
        for memory, (similarity, _count) in rows
    }
    return {memory.pk: memory for memory, _values in rows}, similarities, int(rows[0][1][1])
