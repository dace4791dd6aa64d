"""A request that loses its database connection is a 503 with Retry-After, never a 500."""

import pytest
from django.db import connection

from apps.memory.models import Memory
from tests.database_faults import terminate_this_connection


@pytest.mark.django_db(transaction=True)
def test_a_write_whose_database_connection_died_is_a_503_with_retry_after(agent, settings):
    settings.DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = 3
    terminate_this_connection()
    try:
        response = agent.post("/api/v1/memory", {"text": "written while the database is gone"})
    finally:
        connection.close()  # the next query opens a fresh session

    assert response.status_code == 503
    assert response["Retry-After"] == "3"
    assert response.json()["error"]["code"] == "database_unavailable"
    assert Memory.objects.count() == 0
