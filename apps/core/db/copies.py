"""Binary ``COPY`` of model instances built in Python, for the bulk paths (a restore, a load).

One ``COPY … FROM STDIN (FORMAT BINARY)`` is one statement, however many rows it carries, so
each statement-level trigger on the table (the keyword postings, the subject counts) runs once
for the whole set, after the rows, with every row in its transition table; and nothing is
quoted into statement text or parsed back from it. The values are those
:func:`~apps.core.db.inserts.insert_instances` sends (each concrete field's ``pre_save``, so
``auto_now_add`` stamps the instance unless the caller turns that off, and
``get_db_prep_save``), except vectors, which go as pgvector's binary form rather than text.

The caller owns the transaction: a row the database refuses aborts the statement, and the
caller's rollback takes every row of the copy with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np
from django.db import connections
from django.db.models import Field, Model
from django.db.models.expressions import DatabaseDefault
from pgvector.django import VectorField
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo


@cache
def _columns(model: type[Model]) -> tuple[Field[Any, Any], ...]:
    if model._meta.parents:
        raise TypeError(f"{model.__name__} inherits a concrete model: use bulk_create.")
    return tuple(field for field in model._meta.concrete_fields if not field.generated)


def _type_oids(cursor: Any, model: type[Model]) -> list[int]:
    cursor.execute(
        "SELECT attname, atttypid FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [model._meta.db_table],
    )
    oids = {name: int(oid) for name, oid in cursor.fetchall()}
    return [oids[str(field.column)] for field in _columns(model)]


def _value(field: Field[Any, Any], instance: Model, connection: Any, *, stamp: bool) -> Any:
    value = field.pre_save(instance, add=True) if stamp else field.value_from_object(instance)
    if isinstance(value, DatabaseDefault):
        raise ValueError(f"{type(instance).__name__}.{field.name} has no value to copy.")
    if isinstance(field, VectorField):
        return None if value is None else np.asarray(value, dtype=np.float32)
    return field.get_db_prep_save(value, connection)


def copy_instances(
    instances: Iterable[Model], *, model: type[Model], using: str, stamp: bool = True
) -> int:
    """Write ``instances`` (all of ``model``) with one binary COPY on ``using``, inside the
    caller's transaction; they are saved instances afterwards. Returns the rows written.

    ``stamp=False`` writes every field as the instance holds it, ``auto_now`` and
    ``auto_now_add`` timestamps included: a restore keeps the times it was given."""
    connection = connections[using]
    connection.ensure_connection()
    fields = _columns(model)
    quote = connection.ops.quote_name
    statement = (
        f"COPY {quote(model._meta.db_table)} "
        f"({', '.join(quote(str(field.column)) for field in fields)}) FROM STDIN (FORMAT BINARY)"
    )
    written = 0
    with connection.cursor() as cursor:
        type_oids = _type_oids(cursor, model)
        raw = cursor.cursor
        if any(isinstance(field, VectorField) for field in fields):
            # Scoped to this cursor: Django's own cursors keep their text vector loaders.
            register_vector_info(raw, TypeInfo.fetch(connection.connection, "vector"))
        with connection.wrap_database_errors, raw.copy(statement) as copy:
            copy.set_types(type_oids)
            for instance in instances:
                if type(instance) is not model:
                    raise TypeError(f"copy_instances takes {model.__name__} instances only.")
                copy.write_row(
                    [_value(field, instance, connection, stamp=stamp) for field in fields]
                )
                instance._state.adding = False
                instance._state.db = using
                written += 1
    return written
