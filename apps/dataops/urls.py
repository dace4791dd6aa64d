from django.urls import path

from apps.dataops.apis import MemoryEraseApi

urlpatterns = [
    path("memory/erase", MemoryEraseApi.as_view(), name="memory-erase"),
]
