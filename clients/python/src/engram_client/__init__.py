"""engram-client: a typed Python client for Engram.

``Engram`` (sync) and ``AsyncEngram`` (asyncio) have one method per API operation; responses
are pydantic models (:mod:`engram_client.models`); failures are :class:`EngramError`
subclasses carrying the API's ``code``. Framework adapters live in the optional modules
``engram_client.langgraph`` (LangGraph ``BaseStore``) and ``engram_client.openai_agents``
(OpenAI Agents SDK ``Session``).
"""

from engram_client._core import DEFAULT_SESSION_TTL_SECONDS, NewMemory, NewTurn, __version__
from engram_client.async_client import AsyncEngram
from engram_client.client import Engram
from engram_client.errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    EngramConnectionError,
    EngramError,
    InvalidRequestError,
    LockedError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
    ServiceUnavailableError,
)
from engram_client.models import (
    ArticleProposal,
    GraduationResult,
    KnowledgeContext,
    KnowledgeSearch,
    Memory,
    MemoryPage,
    MemoryRecall,
    MergedRecall,
    Project,
    PromotionResult,
    RecallHit,
    RecallReferenced,
    SessionCleared,
    SessionHistory,
    SessionTurn,
    Whoami,
)

__all__ = [
    "DEFAULT_SESSION_TTL_SECONDS",
    "ArticleProposal",
    "AsyncEngram",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "Engram",
    "EngramConnectionError",
    "EngramError",
    "GraduationResult",
    "InvalidRequestError",
    "KnowledgeContext",
    "KnowledgeSearch",
    "LockedError",
    "Memory",
    "MemoryPage",
    "MemoryRecall",
    "MergedRecall",
    "NewMemory",
    "NewTurn",
    "NotFoundError",
    "PermissionDeniedError",
    "Project",
    "PromotionResult",
    "RateLimitedError",
    "RecallHit",
    "RecallReferenced",
    "ServerError",
    "ServiceUnavailableError",
    "SessionCleared",
    "SessionHistory",
    "SessionTurn",
    "Whoami",
    "__version__",
]
