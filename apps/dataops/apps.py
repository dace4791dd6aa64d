from django.apps import AppConfig


class DataopsConfig(AppConfig):
    """Tenant-wide data operations above memory and knowledge: export and import, erasure with
    receipts, re-embedding and operator statistics."""

    name = "apps.dataops"
    label = "dataops"
    default_auto_field = "django.db.models.BigAutoField"
