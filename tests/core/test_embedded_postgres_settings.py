"""The embedded cluster's server settings: shared buffers sized from the machine's memory, and
applied to a cluster made before the current settings as well as to a new one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from apps.core.embedded_postgres import (
    SETTINGS_MARKER,
    physical_memory_bytes,
    shared_buffers_for,
    stop_embedded_postgres,
)

GIB = 1024**3


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        (24 * GIB, "6144MB"),  # a quarter
        (2 * GIB, "512MB"),
        (256 * 1024**2, "128MB"),  # never below the floor
        (128 * GIB, "8192MB"),  # nor above the ceiling
        (0, "512MB"),  # the platform did not say
    ],
)
def test_shared_buffers_are_a_quarter_of_memory_within_bounds(memory, expected):
    assert shared_buffers_for(memory) == expected


def test_this_machine_reports_its_memory():
    assert physical_memory_bytes() > GIB


# Each start in a process of its own, as `make run` and the commands start the cluster
# (pgserver keeps one handle per data dir and process, and would not start it twice in one).
START_AND_SHOW = (
    "import sys; from pathlib import Path; import psycopg; "
    "from apps.core.embedded_postgres import ensure_embedded_postgres; "
    "server = ensure_embedded_postgres(Path(sys.argv[1]), database='engram'); "
    "connection = psycopg.connect(host=server.socket_dir, port=server.port, user=server.user, "
    "dbname='engram', autocommit=True); "
    "print(connection.execute('SHOW shared_buffers').fetchone()[0]); "
    "sys.argv[2:] and connection.execute(\"ALTER SYSTEM SET shared_buffers = '128MB'\")"
)


def _start(pgdata: Path, *extra: str) -> str:
    result = subprocess.run(  # noqa: S603 - this interpreter, arguments built here
        [sys.executable, "-c", START_AND_SHOW, str(pgdata), *extra],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_cluster_runs_with_the_sized_buffers_and_an_older_one_is_brought_up_to_them(
    tmp_path: Path,
):
    pgdata = tmp_path / "pg"
    expected = shared_buffers_for(physical_memory_bytes())
    try:
        # The new cluster's value; then it is set back as an older cluster would have it.
        assert _start(pgdata, "set-128MB") == expected
        stop_embedded_postgres(pgdata)
        (pgdata / SETTINGS_MARKER).unlink()  # made before these settings

        assert _start(pgdata) == expected
        assert (pgdata / SETTINGS_MARKER).exists()
    finally:
        stop_embedded_postgres(pgdata)
