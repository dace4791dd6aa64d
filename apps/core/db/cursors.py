"""Cursors with server-side parameter binding, for the statements where it pays.

Django's psycopg 3 backend binds parameters on the client by default: every value is quoted
into the statement text. For a recall statement that text carries a 384-dimension query
vector, and sending and parsing it inline cost as much as running the scan (the 100k-row
benchmark, docs/benchmarks/memory-bench.md). A server-bound
cursor sends the values beside the statement instead; nothing is prepared (Django keeps
``prepare_threshold`` off so connection poolers keep working), so each statement is still
planned with its actual values.

These cursors also read ``timestamptz`` values with psycopg's own compiled loader when the
session is in UTC. Django registers a pure-Python subclass of psycopg's loader on every
connection, only to stamp its own time zone on each value; in UTC psycopg's compiled loader
stamps the same ``datetime.timezone.utc``, several times faster, and a recall reads some fifty
timestamps.

https://docs.djangoproject.com/en/5.2/ref/databases/#server-side-parameters-binding
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db import connections
from django.db.backends.postgresql.base import ServerBindingCursor as _ServerBindingCursor
from django.db.backends.utils import CursorWrapper
from psycopg.pq import Format

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
    if _session_in_utc(connection):
        raw.adapters.register_loader(_TIMESTAMPTZ_OID, _COMPILED_TIMESTAMPTZ_LOADER)
    wrapped = (
        connection.make_debug_cursor(raw)
        if connection.queries_logged
        else connection.make_cursor(raw)
    )
    with wrapped as cursor:
        yield cursor


_TIMESTAMPTZ_OID = psycopg.postgres.types["timestamptz"].oid
# psycopg's default loader: the compiled one when psycopg's binary package is installed.
_COMPILED_TIMESTAMPTZ_LOADER = psycopg.adapters.get_loader(_TIMESTAMPTZ_OID, Format.TEXT)


def _session_in_utc(connection: Any) -> bool:
    """Whether psycopg's own loader gives exactly what Django's would: Django stamps
    ``connection.timezone`` on each value, psycopg the zone of the session's ``TimeZone``,
    which for ``UTC`` is ``datetime.timezone.utc`` too."""
    return bool(
        connection.timezone is datetime.UTC
        and connection.connection.info.parameter_status("TimeZone") == "UTC"
    )
