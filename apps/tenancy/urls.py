from django.urls import path

from apps.tenancy.apis import WhoamiApi

urlpatterns = [
    path("whoami", WhoamiApi.as_view(), name="whoami"),
]
