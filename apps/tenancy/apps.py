from django.apps import AppConfig
from typing_extensions import override


class TenancyConfig(AppConfig):
    name = "apps.tenancy"
    label = "tenancy"
    default_auto_field = "django.db.models.BigAutoField"

    @override
    def ready(self) -> None:
        from apps.tenancy import schema  # noqa: F401 - registers the OpenAPI auth extension
