"""Telling every process at once that API keys changed: a revocation, a halt, a resume.

Web processes authenticate hot keys from memory (apps/tenancy/selectors.py); a change made in
another process (``revoke_api_key``, ``halt_tenant``, another web process) must empty those
memories before their next request, not after their TTL. The change is announced in the two
places every process of a deployment can see, and each authentication compares them with what
it saw when it filled its memory:

- the shared cache (Redis under ``REDIS_URL``, which production requires): every process of
  every host;
- a file under the data dir (``API_KEY_CHANGES_FILE``): every process of one machine, such as
  ``make run``'s web processes and an operator's command, which share no cache.

A process that shares neither with the one that made the change (another host without
``REDIS_URL``) still drops the key within ``API_KEY_CACHE_SECONDS``.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

from apps.core.db.on_commit import after_commit

logger = logging.getLogger(__name__)

CACHE_KEY = "tenancy:api-key-changes"

#: What a process compares: the shared cache's token and the file's identity.
Generation = tuple[object, tuple[int, int] | None]


#: ``api_keys_generation``'s token when the caller has not read it from the cache.
NOT_READ = object()


def api_keys_generation(*, token: object = NOT_READ) -> Generation:
    """The latest announcement as this process can see it (one cache read, one ``stat``).
    ``token``: what the shared cache holds at :data:`CACHE_KEY`, when the caller read it
    already (together with other keys, in one round trip)."""
    if token is NOT_READ:
        token = cache.get(CACHE_KEY)
    try:
        status = os.stat(_changes_file())
        on_disk: tuple[int, int] | None = (status.st_ino, status.st_mtime_ns)
    except OSError:
        on_disk = None
    return token, on_disk


def api_keys_changed() -> None:
    """Announce a change of keys or tenants, once the current transaction commits."""
    after_commit(_announce)


def _announce() -> None:
    token = uuid.uuid4().hex
    cache.set(CACHE_KEY, token, timeout=None)
    path = _changes_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A new file replaces the old one, so its inode changes even within one clock tick.
        scratch = path.with_name(f".{path.name}.{token}")
        scratch.write_text(f"{token}\n")
        os.replace(scratch, path)
    except OSError:
        logger.warning("could not announce an API key change in %s", path, exc_info=True)


def _changes_file() -> Path:
    return Path(settings.API_KEY_CHANGES_FILE)
