from django.apps import AppConfig
from typing_extensions import override


class KnowledgeConfig(AppConfig):
    name = "apps.knowledge"
    label = "knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    @override
    def ready(self) -> None:
        from apps.knowledge.apis import schema  # noqa: F401 - registers the OpenAPI enum extension
