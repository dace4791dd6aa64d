"""One INSERT for model instances built in Python, for the write path that runs on every call.

``QuerySet.bulk_create`` compiles its statement afresh on each call and quotes every value into
its text. Building the values from the fields and sending them beside a statement compiled once
(which Postgres can then prepare) costs well under half of that for one memory row, a tenth of
a write's CPU under load (docs/benchmarks/load.md, "Latest").

The values are what ``bulk_create`` would send: each concrete field's ``pre_save`` (so
``auto_now_add`` stamps the instance) and ``get_db_prep_save``. Nothing is read back, so every
column must have its value in Python: a field left to its database default is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from django.db import connections
from django.db.models import Field, Model
from django.db.models.expressions import DatabaseDefault

from apps.core.db.cursors import server_bound_cursor


@cache
def _columns(model: type[Model]) -> tuple[Field[Any, Any], ...]:
    if model._meta.parents:
        raise TypeError(f"{model.__name__} inherits a concrete model: use bulk_create.")
    return tuple(field for field in model._meta.concrete_fields if not field.generated)


@cache
def _statement(model: type[Model], rows: int, using: str) -> str:
    quote = connections[using].ops.quote_name
    names = ", ".join(quote(str(field.column)) for field in _columns(model))
    row = "(" + ", ".join(["%s"] * len(_columns(model))) + ")"
    table = quote(model._meta.db_table)
    return f"INSERT INTO {table} ({names}) VALUES " + ", ".join([row] * rows)  # noqa: S608


def insert_instances(instances: Sequence[Model], *, using: str) -> None:
    """Insert ``instances`` (all of one model) in one statement on ``using``, server-bound so
    that psycopg may prepare it; they are saved instances afterwards, as after bulk_create."""
    if not instances:
        return
    model = type(instances[0])
    connection = connections[using]
    params: list[Any] = []
    for instance in instances:
        if type(instance) is not model:
            raise TypeError("insert_instances takes instances of one model.")
        for field in _columns(model):
            value = field.pre_save(instance, add=True)
            if isinstance(value, DatabaseDefault):
                raise ValueError(f"{model.__name__}.{field.name} has no value to insert.")
            params.append(field.get_db_prep_save(value, connection))
    with server_bound_cursor(using) as cursor:
        cursor.execute(_statement(model, len(instances), using), params)
    for instance in instances:
        instance._state.adding = False
        instance._state.db = using
