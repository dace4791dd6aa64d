"""The Celery app. Tasks are discovered from each app's tasks.py."""

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

logger = logging.getLogger(__name__)

app = Celery("engram")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def load_local_embedding_model(**_: Any) -> None:
    """Each pool process loads the local embedding model when it starts, not inside its first
    drain: otherwise the first writes after a worker (re)start wait a model load (~1-2 s on
    two cores) longer for their vectors."""
    from django.conf import settings

    if settings.EMBEDDING_PROVIDER == "local":
        from apps.providers.embedders import local_onnx

        try:
            local_onnx.load_model()
        except Exception:
            # Not fatal here: the first drain loads it again and fails as a provider error
            # (counted by its circuit breaker) rather than the pool process dying at birth.
            logger.exception("the local embedding model did not load at worker start")


def freeze_loaded_objects(**_: Any) -> None:
    """Once the pool process has loaded (apps/core/loaded_objects.py): a full collection
    then no longer stalls a drain walking what the process keeps for its whole life."""
    from apps.core import loaded_objects

    loaded_objects.freeze_loaded_objects()


# Receivers run in the order they connect: the model loads first, then is frozen with the rest.
worker_process_init.connect(load_local_embedding_model)
worker_process_init.connect(freeze_loaded_objects)
