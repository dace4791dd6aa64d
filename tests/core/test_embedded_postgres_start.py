"""The embedded database starts once per data dir, only when something connects, and never
for an operator command pointed at the wrong data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings

from apps.core.embedded_postgres import embedded_status, stop_embedded_postgres

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def _run(args: list[str], data_dir: Path, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "ENGRAM_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    environment.pop("DATABASE_URL", None)
    return subprocess.run(  # noqa: S603 - this interpreter, arguments built here
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        check=False,
        cwd=settings.BASE_DIR,
        stdin=subprocess.DEVNULL,
    )


def test_a_command_on_a_data_dir_without_a_database_says_so_in_one_line(tmp_path):
    # The server's data dir is elsewhere; this one (a forgotten ENGRAM_DATA_DIR) is empty.
    result = _run([MANAGE, "memory_stats"], tmp_path)

    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(
        f"CommandError: embedded_database_missing: No embedded database at {tmp_path / 'pg'}"
    )
    assert "ENGRAM_DATA_DIR" in result.stderr
    assert not (tmp_path / "pg" / "PG_VERSION").exists()
    assert embedded_status(tmp_path / "pg").running is False


def test_with_json_the_missing_database_is_a_json_error(tmp_path):
    result = _run([MANAGE, "list_api_keys", "--json"], tmp_path)

    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "embedded_database_missing"
    assert not (tmp_path / "pg" / "PG_VERSION").exists()


def test_status_reads_the_cluster_without_starting_it(tmp_path):
    result = _run([MANAGE, "embedded_postgres", "status", "--json"], tmp_path)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "pgdata": str(tmp_path / "pg"),
        "initialised": False,
        "running": False,
        "pid": None,
        "socket_dir": None,
        "port": None,
    }
    assert not (tmp_path / "pg" / "PG_VERSION").exists()


@pytest.mark.django_db
def test_status_of_the_running_cluster_names_its_server():
    # The suite's own cluster, which this test's database connection keeps running.
    data_dir = Path(settings.EMBEDDED_POSTGRES_DIR).parent
    running = embedded_status(Path(settings.EMBEDDED_POSTGRES_DIR))

    result = _run([MANAGE, "embedded_postgres", "status", "--json"], data_dir)

    assert result.returncode == 0, result.stderr
    reported = json.loads(result.stdout)
    assert reported["running"] is True
    assert reported["pid"] == running.pid
    assert reported["port"] == running.port


START = (
    "import json, sys; from pathlib import Path; "
    "from apps.core.embedded_postgres import embedded_server, embedded_status; "
    "pgdata = Path(sys.argv[1]); embedded_server(pgdata, database='engram'); "
    "print(json.dumps(embedded_status(pgdata).pid))"
)


def test_two_processes_starting_one_data_dir_share_one_server(tmp_path):
    pgdata = tmp_path / "pg"
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda _: _run(["-c", START, str(pgdata)], tmp_path), [1, 2]))

        assert [result.returncode for result in results] == [0, 0], [r.stderr for r in results]
        pids = {json.loads(result.stdout) for result in results}
        assert pids == {embedded_status(pgdata).pid}
        postmasters = subprocess.run(  # noqa: S603 - a fixed tool, a pattern built here
            ["pgrep", "-f", f"postgres -D {pgdata}"],  # noqa: S607 - procps, by name
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        assert postmasters == [str(embedded_status(pgdata).pid)]
    finally:
        stop_embedded_postgres(pgdata)
