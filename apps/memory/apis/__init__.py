"""HTTP API for agent memory under /api/v1/memory (thin: validate → one service → render)."""

from apps.memory.apis.detail import MemoryDetailApi
from apps.memory.apis.graduation import MemoryGraduateApi
from apps.memory.apis.memories import MemoryBatchApi, MemoryListApi
from apps.memory.apis.promotion import MemoryPromoteApi
from apps.memory.apis.recall import MemoryRecallApi
from apps.memory.apis.sessions import (
    SessionHistoryApi,
    SessionLastTurnApi,
    SessionTurnDetailApi,
    SessionTurnListApi,
)

__all__ = [
    "MemoryBatchApi",
    "MemoryDetailApi",
    "MemoryGraduateApi",
    "MemoryListApi",
    "MemoryPromoteApi",
    "MemoryRecallApi",
    "SessionHistoryApi",
    "SessionLastTurnApi",
    "SessionTurnDetailApi",
    "SessionTurnListApi",
]
