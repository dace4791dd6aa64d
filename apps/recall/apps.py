from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "apps.recall"
    label = "recall"
    default_auto_field = "django.db.models.BigAutoField"
