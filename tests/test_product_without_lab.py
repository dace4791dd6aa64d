"""Production installs no lab code, and every product module imports with the lab absent."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from config.env import BASE_DIR

# Runs in a fresh interpreter: this suite's own process has the lab installed and imported.
PROBE = textwrap.dedent(
    """
    import importlib, importlib.abc, pkgutil, sys

    class NoLab(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "lab" or name.startswith("lab."):
                raise ImportError(f"{name}: the lab is not installed in production")
            return None

    sys.meta_path.insert(0, NoLab())
    import django
    django.setup()
    from django.conf import settings
    import apps

    assert not [app for app in settings.INSTALLED_APPS if app.split(".")[0] == "lab"]
    imported = 0
    for module in pkgutil.walk_packages(apps.__path__, "apps."):
        if ".migrations." in module.name:
            continue
        importlib.import_module(module.name)
        imported += 1
    print(imported)
    """
)


def test_production_settings_install_no_lab_and_every_product_module_imports_without_it():
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 50,
        "ENGRAM_ENCRYPTION_KEY": "probe-only-encryption-key",
        "DATABASE_URL": "postgres://probe@127.0.0.1:1/probe",
        "CELERY_BROKER_URL": "memory://",
        "REDIS_URL": "redis://127.0.0.1:6379/15",
    }
    completed = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", PROBE],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert int(completed.stdout.strip()) > 100
