"""The lab's destructive fast paths run only on databases a benchmark (or the test runner) made."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connections

from apps.core.db.routers import PRIMARY
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab import memory_bench
from lab.scratch import (
    SharedDatabaseRefused,
    database_is_disposable,
    require_disposable_database,
    scratch_database,
)

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "heavy_read"])


def _database_names() -> set[str]:
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database")
        return {row[0] for row in cursor.fetchall()}


@contextmanager
def _unmarked_database() -> Iterator[str]:
    """A database that looks like anyone's: no scratch marker, not a test-runner name."""
    name = f"engram_shared_{secrets.token_hex(4)}"
    original = connections[PRIMARY].settings_dict["NAME"]
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    connections[PRIMARY].close()
    connections[PRIMARY].settings_dict["NAME"] = name
    try:
        yield name
    finally:
        connections[PRIMARY].close()
        connections[PRIMARY].settings_dict["NAME"] = original
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_test_runners_database_counts_as_disposable():
    assert database_is_disposable() is True


def test_destructive_steps_are_refused_on_a_database_no_benchmark_created():
    tenant = tenant_create(slug="bench-guard", name="guard")
    corpus = memory_bench.Corpus.plan(memory_bench.CorpusSpec(rows=10, subjects=2, dims=384))
    with _unmarked_database():
        assert database_is_disposable() is False
        with pytest.raises(SharedDatabaseRefused, match="a bulk load"):
            memory_bench.bulk_load(tenant=tenant, corpus=corpus)
        with pytest.raises(SharedDatabaseRefused, match="the corpus cleanup"):
            memory_bench.delete_corpus(tenant=tenant)
        require_disposable_database(allow_shared=True, step="an explicit override")
        # Refused before anything ran: the database is still empty of Engram's tables.
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT to_regclass('memory_memory') IS NULL")
            assert cursor.fetchone() == (True,)
    assert Tenant.objects.filter(slug="bench-guard").count() == 1


def test_a_scratch_database_is_marked_migrated_used_and_dropped():
    before = _database_names()
    with scratch_database() as name:
        assert name.startswith("engram_lab_")
        assert connections[PRIMARY].settings_dict["NAME"] == name
        assert database_is_disposable() is True
        tenant_create(slug="inside-scratch", name="scratch")
        assert Tenant.objects.filter(slug="inside-scratch").count() == 1
    assert _database_names() == before
    assert Tenant.objects.filter(slug="inside-scratch").count() == 0


def test_only_scratch_databases_can_be_reused():
    with (
        pytest.raises(SharedDatabaseRefused, match="not a scratch database"),
        scratch_database(reuse="engram"),
    ):
        pass
