from django.urls import path, register_converter

from apps.memory.apis import (
    MemoryBatchApi,
    MemoryDetailApi,
    MemoryGraduateApi,
    MemoryListApi,
    MemoryPromoteApi,
    MemoryRecallApi,
    SessionHistoryApi,
    SessionLastTurnApi,
    SessionTurnDetailApi,
    SessionTurnListApi,
)
from apps.memory.apis.sessions import SessionIdConverter

register_converter(SessionIdConverter, "session_id")

urlpatterns = [
    path("memory", MemoryListApi.as_view(), name="memory-list"),
    path("memory/batch", MemoryBatchApi.as_view(), name="memory-batch"),
    path("memory/graduate", MemoryGraduateApi.as_view(), name="memory-graduate"),
    path("memory/promote", MemoryPromoteApi.as_view(), name="memory-promote"),
    path("memory/recall", MemoryRecallApi.as_view(), name="memory-recall"),
    path(
        "memory/sessions/<session_id:session_id>",
        SessionHistoryApi.as_view(),
        name="memory-session-history",
    ),
    path(
        "memory/sessions/<session_id:session_id>/turns",
        SessionTurnListApi.as_view(),
        name="memory-session-turn-list",
    ),
    path(
        "memory/sessions/<session_id:session_id>/turns/last",
        SessionLastTurnApi.as_view(),
        name="memory-session-turn-last",
    ),
    path(
        "memory/sessions/<session_id:session_id>/turns/<int:seq>",
        SessionTurnDetailApi.as_view(),
        name="memory-session-turn-detail",
    ),
    path("memory/<uuid:memory_id>", MemoryDetailApi.as_view(), name="memory-detail"),
]
