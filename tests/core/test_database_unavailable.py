"""A request that loses its database connection is a 503 with Retry-After, never a 500."""

import psycopg
import pytest
from django.db import connection

from apps.memory.models import Memory


def _terminate_this_connection() -> None:
    """Kill this process's database session from the outside, as a server restart would."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"], port=s["PORT"], user=s["USER"], dbname=s["NAME"], autocommit=True
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.mark.django_db(transaction=True)
def test_a_write_whose_database_connection_died_is_a_503_with_retry_after(agent, settings):
    settings.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 3
    _terminate_this_connection()
    try:
        response = agent.post("/api/v1/memory", {"text": "written while the database is gone"})
    finally:
        connection.close()  # the next query opens a fresh session

    assert response.status_code == 503
    assert response["Retry-After"] == "3"
    assert response.json()["error"]["code"] == "database_unavailable"
    assert Memory.objects.count() == 0
