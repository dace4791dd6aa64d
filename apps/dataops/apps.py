from django.apps import AppConfig


class DataopsConfig(AppConfig):
    """Tenant-wide data operations above memory and knowledge: export and import, erasure with
    receipts, re-embedding, operator statistics and oversight (listing and forgetting any
    subject's memories)."""

    name = "apps.dataops"
    label = "dataops"
    default_auto_field = "django.db.models.BigAutoField"
