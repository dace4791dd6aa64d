from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "apps.providers"
    label = "providers"
    default_auto_field = "django.db.models.BigAutoField"
