"""Gunicorn settings for Engram's web tier (``make run``, ``make stack``, the image).

Sized from the machine: one process per core, because a request's CPU work (the query
embedding, SQL row handling, rendering) holds the GIL, so threads in one process cannot use a
second core; a few threads per process cover the time a request waits on Postgres. The local
embedding model runs single-threaded in each web process by default, so N processes on N cores
do not oversubscribe them. docs/configuration.md, "Sizing the web tier".
https://docs.gunicorn.org/en/stable/settings.html
"""

from __future__ import annotations

import os
from typing import Any

# Under production settings the master checks the environment before it forks: a worker that
# exits at boot would only be respawned, and the operator would never see the one-line reason.
if os.environ.get("DJANGO_SETTINGS_MODULE") == "config.settings.production":
    from config.env import require_production_environment

    require_production_environment()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


bind = os.environ.get("ENGRAM_WEB_BIND", f"127.0.0.1:{os.environ.get('PORT', '8000')}")
workers = int(os.environ.get("ENGRAM_WEB_WORKERS") or _cores())
threads = int(os.environ.get("ENGRAM_WEB_THREADS") or 4)
graceful_timeout = 5
# Gunicorn's largest request line, so that a long URL reaches the API's 414 envelope
# (ENGRAM_REQUEST_URL_MAX_BYTES, 4 KiB by default) rather than gunicorn's own HTML page.
limit_request_line = 8190
accesslog = os.environ.get("ENGRAM_WEB_ACCESS_LOG", "-")
# Gunicorn's default line plus the serving process (``pid<1234>``), so a request can be traced to
# the worker that handled it.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" pid%(p)s'
# The worker processes read this before Django's settings load.
os.environ.setdefault("ENGRAM_LOCAL_EMBEDDING_THREADS", str(max(1, _cores() // max(1, workers))))


def post_fork(server: Any, worker: Any) -> None:
    """Tell the worker how many web processes share the load (``--workers`` included) before
    its settings load: without a shared cache, each holds its share of per-subject caps."""
    os.environ["ENGRAM_WEB_PROCESSES"] = str(server.cfg.workers)


def post_worker_init(worker: Any) -> None:
    """Load the local embedding models (the stored vectors' and the queries') and the token
    table late interaction reads before the first request, not during it; then freeze what
    was loaded (apps/core/loaded_objects.py)."""
    from importlib import import_module

    from django.conf import settings

    from apps.core.loaded_objects import freeze_loaded_objects

    if settings.EMBEDDING_PROVIDER == "local":
        from apps.providers import token_vectors
        from apps.providers.embedders import local_onnx

        local_onnx.load_query_model()
        token_vectors.load_token_table()
    import_module(settings.ROOT_URLCONF)  # it would load on first use: load it to be frozen
    freeze_loaded_objects()
