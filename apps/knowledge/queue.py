"""The knowledge app's background tasks, as signatures sent by name.

Services enqueue through these and never import ``apps.knowledge.tasks``: the tasks import
the services they run, so the import goes one way only. The names are the tasks' registered
names.
"""

from celery import signature

EMBED_ARTICLES = signature("knowledge.embed_articles")
