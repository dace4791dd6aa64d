"""The data operations app's background task: the model migration's beat run."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="dataops.migrate_embeddings", ignore_result=True, acks_late=True)
def migrate_embeddings_task() -> None:
    """Re-embed a bounded batch of each tenant's vectors of an old model
    (``apps.dataops.services.migration``). Idempotent: what is left is read afresh."""
    from apps.dataops.services import embeddings_migrate

    embeddings_migrate()
