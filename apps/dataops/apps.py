from django.apps import AppConfig
from typing_extensions import override


class DataopsConfig(AppConfig):
    """Tenant-wide data operations above memory and knowledge: export and import, erasure with
    receipts, re-embedding, operator statistics and oversight (listing and forgetting any
    subject's memories)."""

    name = "apps.dataops"
    label = "dataops"
    default_auto_field = "django.db.models.BigAutoField"

    @override
    def ready(self) -> None:
        from apps.dataops.metrics import register_embedding_migration_metrics

        register_embedding_migration_metrics()
