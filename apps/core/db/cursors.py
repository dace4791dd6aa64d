"""Cursors with server-side parameter binding, for the statements where it pays.

Django's psycopg 3 backend binds parameters on the client by default: every value is quoted
into the statement text. For a recall statement that text carries a 384-dimension query
vector, and sending and parsing it inline cost as much as running the scan (the 100k-row
benchmark, docs/benchmarks/memory-bench.md). A server-bound
cursor sends the values beside the statement instead; nothing is prepared (Django keeps
``prepare_threshold`` off so connection poolers keep working), so each statement is still
planned with its actual values.

https://docs.djangoproject.com/en/5.2/ref/databases/#server-side-parameters-binding
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections
from django.db.backends.postgresql.base import ServerBindingCursor as _ServerBindingCursor
from django.db.backends.utils import CursorWrapper

from apps.core.vectors import VectorParam, VectorParamDumper

# Django's psycopg 3 server-binding cursor class (django-stubs describe the psycopg2 one).
ServerBindingCursor: Any = _ServerBindingCursor


@contextmanager
def server_bound_cursor(using: str) -> Iterator[CursorWrapper]:
    """A cursor on ``using`` that binds parameters server-side, wrapped as Django wraps its own
    (error translation, execute wrappers, query logging when it is on). It accepts
    :class:`~apps.core.vectors.VectorParam` values."""
    connection = connections[using]
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = ServerBindingCursor(connection.connection)
    raw.adapters.register_dumper(VectorParam, VectorParamDumper)
    wrapped = (
        connection.make_debug_cursor(raw)
        if connection.queries_logged
        else connection.make_cursor(raw)
    )
    with wrapped as cursor:
        yield cursor
