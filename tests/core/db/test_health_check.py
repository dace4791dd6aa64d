"""The database health check before a request's first query: no round trip, and a connection
the server ended is replaced rather than failing the request."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
import pytest
from django.db import connections

from apps.core.db.routers import PRIMARY


def _terminate(pid: int) -> None:
    params = connections[PRIMARY].settings_dict
    with psycopg.connect(
        host=params["HOST"],
        port=params["PORT"],
        user=params["USER"],
        dbname=params["NAME"],
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def _until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the timeout"
        time.sleep(0.01)


@pytest.mark.django_db(transaction=True)
def test_an_idle_connection_is_usable_without_a_round_trip(mocker):
    connection = connections[PRIMARY]
    connection.ensure_connection()
    raw = connection.connection
    sent = mocker.patch.object(raw, "execute", side_effect=AssertionError("a round trip"))
    cursor = mocker.patch.object(raw, "cursor", side_effect=AssertionError("a round trip"))

    assert connection.is_usable() is True

    sent.assert_not_called()
    cursor.assert_not_called()


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_before_the_next_query():
    connection = connections[PRIMARY]
    connection.ensure_connection()
    ended = connection.connection.info.backend_pid

    _terminate(ended)
    _until(lambda: not connection.is_usable())
    # What the start of a request does: the next query first checks the kept connection.
    connection.close_if_unusable_or_obsolete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (now,) = cursor.fetchone()

    assert now != ended


@pytest.mark.django_db(transaction=True)
def test_a_closed_connection_is_not_usable():
    connection = connections[PRIMARY]
    connection.ensure_connection()
    connection.connection.close()

    assert connection.is_usable() is False
    connection.close()  # Django forgets it, so the test's teardown connects afresh
