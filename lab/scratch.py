"""Throwaway databases for benchmarks whose fast paths change shared tables.

A bulk load drops the table-wide vector indexes and a cleanup may ``TRUNCATE`` the memory
table: on a database other tenants use, their recall would run without its index (or lose its
rows). Those steps therefore run only on a database this module created and marked, on a
test database the test runner created, or when the operator passes an explicit flag.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.management import call_command
from django.db import connections

from apps.core.db.routers import HEAVY_READ, PRIMARY

SCRATCH_PREFIX = "engram_lab_"
SCRATCH_MARKER = "engram-lab-scratch: created by a benchmark, safe to drop"
# pytest-django (Django's test runner) creates and owns databases with this prefix.
TEST_DATABASE_PREFIX = "test_"


class SharedDatabaseRefused(Exception):
    """A destructive benchmark step was asked to run on a database it did not create."""


def database_is_disposable(alias: str = PRIMARY) -> bool:
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT current_database(), shobj_description(oid, 'pg_database') "
            "FROM pg_database WHERE datname = current_database()"
        )
        row = cursor.fetchone()
    if row is None:
        return False
    name, comment = str(row[0]), row[1]
    return comment == SCRATCH_MARKER or name.startswith(TEST_DATABASE_PREFIX)


def require_disposable_database(*, allow_shared: bool, step: str) -> None:
    if allow_shared or database_is_disposable():
        return
    name = connections[PRIMARY].settings_dict["NAME"]
    raise SharedDatabaseRefused(
        f"{step} changes shared tables, and database {name!r} was not created by a benchmark; "
        "run without --in-place (a scratch database) or pass --allow-shared-changes"
    )


def _point_aliases_at(name: str) -> None:
    for alias in (PRIMARY, HEAVY_READ):
        connections[alias].close()
        settings.DATABASES[alias]["NAME"] = name
        connections[alias].settings_dict["NAME"] = name


@contextmanager
def scratch_database(*, keep: bool = False, reuse: str = "") -> Iterator[str]:
    """Create (or reuse) a marked database on the primary's server and route both aliases to it.

    The heavy-read alias is pointed at the same database: a replica cannot follow a database
    created after it started, and the benchmark measures one server anyway. Dropped on exit
    unless ``keep`` (or ``reuse``) is set.
    """
    original = str(connections[PRIMARY].settings_dict["NAME"])
    original_heavy = str(connections[HEAVY_READ].settings_dict["NAME"])
    name = reuse or f"{SCRATCH_PREFIX}{secrets.token_hex(4)}"
    if not name.startswith(SCRATCH_PREFIX):
        raise SharedDatabaseRefused(f"{name!r} is not a scratch database ({SCRATCH_PREFIX}…)")
    admin = connections[PRIMARY]
    if not reuse:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
            cursor.execute(f"COMMENT ON DATABASE \"{name}\" IS '{SCRATCH_MARKER}'")
    _point_aliases_at(name)
    try:
        if not database_is_disposable():
            raise SharedDatabaseRefused(f"{name!r} does not carry the scratch marker")
        call_command("migrate", verbosity=0, interactive=False)
        yield name
    finally:
        for alias in (PRIMARY, HEAVY_READ):
            connections[alias].close()
        settings.DATABASES[PRIMARY]["NAME"] = original
        connections[PRIMARY].settings_dict["NAME"] = original
        settings.DATABASES[HEAVY_READ]["NAME"] = original_heavy
        connections[HEAVY_READ].settings_dict["NAME"] = original_heavy
        if not (keep or reuse):
            with connections[PRIMARY].cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
