"""Server-bound cursors and the binary vector parameter (apps/core/db/cursors.py)."""

import datetime
from typing import Any

import numpy as np
import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from psycopg.pq import Format

from apps.core.db.cursors import server_bound_cursor
from apps.core.db.routers import PRIMARY
from apps.core.vectors import VectorParam, vector_from_wire, vector_literal
from tests.core.db.conftest import preparing_on_second_run


@pytest.fixture
def prepared_on_second_run():
    """Let psycopg prepare on this connection as the heavy-read repo's settings do."""
    with preparing_on_second_run(PRIMARY) as primary:
        yield primary


@pytest.mark.django_db
def test_values_travel_beside_the_statement_not_inside_it():
    # A client-bound cursor inlines 5 into the text, where Postgres reads it as an integer; a
    # server-bound one sends a typed parameter, and psycopg types a small int as int2.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_typeof(%s)::text", [5])
        assert cursor.fetchone() == ("integer",)
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute("SELECT pg_typeof(%s)::text, %s::text", [5, "it's"])
        assert cursor.fetchone() == ("smallint", "it's")
        assert not isinstance(cursor.cursor, psycopg.ClientCursor)


@pytest.mark.django_db
def test_a_vector_parameter_round_trips_every_float32_exactly():
    vector = np.random.default_rng(7).normal(size=384).astype(np.float32)

    params: list[Any] = [
        VectorParam(vector.tolist()),
        VectorParam(vector),
        vector_literal(vector.tolist()),
    ]
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute("SELECT %s::vector::text, %s::vector = %s::vector", params)
        text, equal = cursor.fetchone()

    assert equal is True
    assert np.array_equal(np.array(text.strip("[]").split(","), dtype=np.float32), vector)


@pytest.mark.django_db
def test_a_vector_read_in_its_binary_form_is_every_float32_exactly():
    vector = np.random.default_rng(11).normal(size=384).astype(np.float32)

    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute("SELECT vector_send(%s::vector)", [vector_literal(vector.tolist())])
        (wire,) = cursor.fetchone()

    read = vector_from_wire(wire)
    assert read.dtype == np.float32
    assert np.array_equal(read, vector)


@pytest.mark.django_db
def test_an_untyped_vector_parameter_takes_its_type_from_the_operator():
    with server_bound_cursor(PRIMARY) as cursor:
        params: list[Any] = [VectorParam([0.0, 1.0, 0.0])]
        cursor.execute("SELECT '[1,0,0]'::vector <=> %s", params)
        assert cursor.fetchone() == (pytest.approx(1.0),)


@pytest.mark.django_db
def test_statements_are_logged_like_any_other_when_logging_is_on():
    with CaptureQueriesContext(connection) as captured, server_bound_cursor(PRIMARY) as cursor:
        cursor.execute("SELECT %s + 1", [41])

    # Logged as the server saw it: the value never became part of the statement's text.
    assert [query["sql"] for query in captured.captured_queries] == ["SELECT $1 + 1"]


@pytest.mark.django_db
def test_a_repeated_statement_is_prepared_once_the_threshold_is_met(prepared_on_second_run):
    statement = "SELECT %s::int * 2 AS doubled_for_the_prepare_test"
    answers = []
    for value in (1, 2, 3):
        with server_bound_cursor(PRIMARY) as cursor:
            cursor.execute(statement, [value])
            answers.append(cursor.fetchone()[0])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%doubled_for_the_prepare_test%"],
        )
        prepared = cursor.fetchone()[0]

    assert answers == [2, 4, 6]
    assert prepared == 1


TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid


@pytest.mark.django_db
def test_timestamps_read_as_djangos_own_cursor_reads_them():
    statement = (
        "SELECT %s::timestamptz, '2026-02-03 04:05:06.789012+05:30'::timestamptz, NULL::timestamptz"
    )
    value = datetime.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.UTC)
    with connection.cursor() as cursor:
        cursor.execute(statement, [value])
        expected = cursor.fetchone()
    with server_bound_cursor(PRIMARY) as cursor:
        cursor.execute(statement, [value])
        read = cursor.fetchone()
        loader = cursor.cursor.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)

    assert loader is psycopg.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)
    assert read == expected
    assert read[0] == value
    assert [stamp.tzinfo for stamp in read[:2]] == [datetime.UTC, datetime.UTC]
    assert read[1].isoformat() == "2026-02-02T22:35:06.789012+00:00"
