"""Production settings refuse half a configuration, and pass `check --deploy` when complete.

Each case runs in a fresh interpreter: settings are read once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.env import BASE_DIR, PRODUCTION_REQUIRED

COMPLETE = {
    "DATABASE_URL": "postgres://probe@127.0.0.1:1/probe",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
    "REDIS_URL": "redis://127.0.0.1:6379/15",
    "DJANGO_SECRET_KEY": "k" * 20 + "Zq9-x_4T!pL2@vR7#mN5$wB8%hJ3^cF6&yD1*sG0(eK" + "u" * 10,
    "ENGRAM_ENCRYPTION_KEY": "probe-only-encryption-key",
}


def _run(
    argv: list[str], environment: dict[str, str], data_dir: Path
) -> subprocess.CompletedProcess[str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if key not in PRODUCTION_REQUIRED
        and key
        not in {"HEAVY_READ_DATABASE_URL", "DJANGO_ALLOWED_HOSTS", "ENGRAM_TRUSTED_PROXY_COUNT"}
    }
    return subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        argv,
        cwd=BASE_DIR,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "ENGRAM_DATA_DIR": str(data_dir),
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("absent", PRODUCTION_REQUIRED)
def test_each_missing_variable_stops_the_process_with_its_name(absent, tmp_path):
    environment = {key: value for key, value in COMPLETE.items() if key != absent}

    completed = _run([sys.executable, "manage.py", "check"], environment, tmp_path)

    assert completed.returncode == 1
    lines = completed.stderr.strip().splitlines()
    assert lines == [
        "engram: production settings refuse to start; missing environment variables: " + absent
    ]
    # Nothing started: no embedded database, no broker folder.
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_a_blank_value_counts_as_missing_and_every_missing_name_is_on_one_line(tmp_path):
    environment = {"DJANGO_SECRET_KEY": COMPLETE["DJANGO_SECRET_KEY"], "REDIS_URL": "  "}

    completed = _run([sys.executable, "manage.py", "check"], environment, tmp_path)

    assert completed.returncode == 1
    assert completed.stderr.strip().splitlines() == [
        "engram: production settings refuse to start; missing environment variables: "
        "DATABASE_URL, CELERY_BROKER_URL, REDIS_URL, ENGRAM_ENCRYPTION_KEY"
    ]


def test_gunicorn_master_exits_before_forking_workers(tmp_path):
    environment = {key: value for key, value in COMPLETE.items() if key != "CELERY_BROKER_URL"}

    completed = _run(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"],
        {**environment, "ENGRAM_WEB_BIND": "127.0.0.1:0"},
        tmp_path,
    )

    assert completed.returncode == 1
    assert completed.stderr.strip().splitlines()[-1] == (
        "engram: production settings refuse to start; missing environment variables: "
        "CELERY_BROKER_URL"
    )
    assert "Booting worker" not in completed.stderr


@pytest.mark.parametrize(
    "heavy_read",
    [
        pytest.param({}, id="_case_no_replica"),
        pytest.param(
            {"HEAVY_READ_DATABASE_URL": "postgres://probe@127.0.0.1:2/probe"}, id="_case_replica"
        ),
    ],
)
def test_complete_configuration_passes_check_deploy_without_warnings(heavy_read, tmp_path):
    completed = _run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {**COMPLETE, **heavy_read},
        tmp_path,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "System check identified no issues (0 silenced)."


#: Prints what the settings decide about hosts and the forwarded scheme.
PROBE = (
    "import json, django; django.setup(); from django.conf import settings; "
    "print(json.dumps({'hosts': settings.ALLOWED_HOSTS, "
    "'proxy_ssl_header': settings.SECURE_PROXY_SSL_HEADER}))"
)


@pytest.mark.parametrize(
    ("_case", "proxies", "expected_header"),
    [
        ("no trusted proxy: the header is not believed", {}, None),
        (
            "behind one trusted proxy",
            {"ENGRAM_TRUSTED_PROXY_COUNT": "1"},
            ["HTTP_X_FORWARDED_PROTO", "https"],
        ),
    ],
)
def test_production_believes_x_forwarded_proto_only_behind_trusted_proxies_and_not_testserver(
    tmp_path, _case, proxies, expected_header
):
    completed = _run([sys.executable, "-c", PROBE], {**COMPLETE, **proxies}, tmp_path)

    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {
        "hosts": ["127.0.0.1", "localhost"],
        "proxy_ssl_header": expected_header,
    }


def test_check_deploy_stays_clean_behind_a_trusted_proxy(tmp_path):
    completed = _run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {**COMPLETE, "ENGRAM_TRUSTED_PROXY_COUNT": "1"},
        tmp_path,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "System check identified no issues (0 silenced)."
