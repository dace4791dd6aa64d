"""Shared by the tests of the database layer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper


@contextmanager
def preparing_on_second_run(alias: str) -> Iterator[BaseDatabaseWrapper]:
    """Let psycopg prepare on ``alias``'s connection from a statement's second run, as the
    heavy-read settings do, and restore the connection's threshold afterwards."""
    connection = connections[alias]
    connection.ensure_connection()
    raw = connection.connection
    before = raw.prepare_threshold
    raw.prepare_threshold = 1
    try:
        yield connection
    finally:
        raw.prepare_threshold = before
