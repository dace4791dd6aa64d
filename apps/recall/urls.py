from django.urls import path

from apps.recall.apis import RecallApi, RecallReferencedApi

urlpatterns = [
    path("recall", RecallApi.as_view(), name="recall"),
    path(
        "recall/<str:recall_id>/referenced", RecallReferencedApi.as_view(), name="recall-referenced"
    ),
]
