"""Local settings (`make run`) encrypt provider secrets under a random key of their own, kept
under $ENGRAM_DATA_DIR, never under a public default.

Each case runs in a fresh interpreter: settings are read once per process.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from config.env import BASE_DIR, LOCAL_ENCRYPTION_KEY_FILE

#: Prints the settings under test; a DATABASE_URL keeps the embedded server from starting.
PROBE = (
    "import json, django; django.setup(); from django.conf import settings; "
    "print(json.dumps({'key': settings.ENGRAM_ENCRYPTION_KEY, "
    "'fallbacks': settings.ENGRAM_ENCRYPTION_KEY_FALLBACKS, 'secret': settings.SECRET_KEY}))"
)


def _start(data_dir: Path, **environment: str) -> subprocess.Popen[str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if key not in {"ENGRAM_ENCRYPTION_KEY", "ENGRAM_ENCRYPTION_KEY_FALLBACKS"}
    }
    return subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-c", PROBE],
        cwd=BASE_DIR,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": "postgres://probe@127.0.0.1:1/probe",
            "ENGRAM_DATA_DIR": str(data_dir),
            **environment,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _settings(process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    probed: dict[str, Any] = json.loads(stdout)
    return probed


def test_a_random_key_is_generated_once_kept_0600_and_read_by_every_process(tmp_path):
    # when: three processes start together on a fresh data dir, then one more later
    first = [_settings(process) for process in [_start(tmp_path) for _ in range(3)]]
    later = _settings(_start(tmp_path))

    # then
    stored = tmp_path / LOCAL_ENCRYPTION_KEY_FILE
    key = stored.read_text().strip()
    assert {run["key"] for run in [*first, later]} == {key}
    assert len(key) == 43  # 32 random bytes, URL-safe base64
    assert key != later["secret"]
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert [path.name for path in tmp_path.glob(f"*{LOCAL_ENCRYPTION_KEY_FILE}*")] == [
        LOCAL_ENCRYPTION_KEY_FILE
    ]  # no leftover written aside
    # What was encrypted before the key existed (under SECRET_KEY) stays readable.
    assert later["fallbacks"] == [later["secret"]]


def test_an_explicit_key_is_used_as_given_and_nothing_is_generated(tmp_path):
    configured = _settings(_start(tmp_path, ENGRAM_ENCRYPTION_KEY="operator-chosen-key"))

    assert (configured["key"], configured["fallbacks"]) == ("operator-chosen-key", [])
    assert list(tmp_path.glob(f"*{LOCAL_ENCRYPTION_KEY_FILE}*")) == []
