"""Real database faults for tests: a session killed from the outside, as a restart would."""

from __future__ import annotations

import psycopg
from django.db import connection


def terminate_this_connection() -> None:
    """Kill this thread's database session from another connection (pg_terminate_backend)."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"], port=s["PORT"], user=s["USER"], dbname=s["NAME"], autocommit=True
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
