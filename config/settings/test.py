"""Test settings: a separate embedded cluster (or DATABASE_URL), local cache, mirrored replica."""

import os

from config.env import BASE_DIR, data_dir, env

# Tests never share state with `make run`: their own data dir unless one is given.
os.environ.setdefault("ENGRAM_DATA_DIR", str(BASE_DIR / ".data" / "test"))

from config.settings.base import *

DEBUG = False
ALLOWED_HOSTS = [*ALLOWED_HOSTS, "testserver"]  # Django's test client
INSTALLED_APPS = [*INSTALLED_APPS, "lab"]
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY", default="test-only-encryption-key")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
DATABASES["heavy_read"]["TEST"] = {"MIRROR": "default"}
ENGRAM_ROUTER_STRICT = True

# Tests that enqueue work do not need a broker on disk. The test that runs a real worker starts
# it with CELERY_BROKER_URL set (Redis, or the filesystem broker), which keeps base's config.
if not env.str("CELERY_BROKER_URL", default=""):
    CELERY_BROKER_URL = "memory://"
    CELERY_BROKER_TRANSPORT = None
    CELERY_BROKER_TRANSPORT_OPTIONS = {}

# Plumbing tests embed with the deterministic double; tests about real semantics switch to
# the local model explicitly.
EMBEDDING_PROVIDER = "fake"

# Each xdist worker announces key changes to itself only: another worker's revocation would
# empty this one's key cache between a test's two authentications.
API_KEY_CHANGES_FILE = (
    data_dir() / f"api-key-changes-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
)
