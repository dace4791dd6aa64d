from django.urls import include, path

from apps.core.api import health
from apps.core.api.schema_view import RedocView, SchemaView, SwaggerUiView

urlpatterns = [
    path("healthz", health.HealthzApi.as_view(), name="healthz"),
    path("readyz", health.ReadyzApi.as_view(), name="readyz"),
    path("metrics", health.MetricsApi.as_view(), name="metrics"),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SwaggerUiView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", RedocView.as_view(url_name="schema"), name="redoc"),
    path("api/v1/tenancy/", include("apps.tenancy.urls")),
    path("api/v1/projects/", include("apps.projects.urls")),
    path("api/v1/knowledge/", include("apps.knowledge.urls")),
    path("api/v1/", include("apps.recall.urls")),
    path("api/v1/", include("apps.memory.urls")),
    path("api/v1/", include("apps.dataops.urls")),
]

handler400 = "apps.core.api.exception_handlers.bad_request_view"
handler403 = "apps.core.api.exception_handlers.permission_denied_view"
handler404 = "apps.core.api.exception_handlers.not_found_view"
handler500 = "apps.core.api.exception_handlers.server_error_view"
