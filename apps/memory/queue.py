"""The memory app's background tasks, as signatures sent by name.

Services enqueue through these and never import ``apps.memory.tasks``: the tasks import the
services they run, so the import goes one way only. The names are the tasks' registered names.
"""

from celery import signature

DRAIN_EMBEDDINGS = signature("memory.drain_embeddings")
PROMOTE_SESSION = signature("memory.promote_session")
