"""Engram's own knobs, each overridable by an environment variable."""

from config.env import env

# Embeddings (DESIGN §3). One deployment pins one dimension.
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_PROVIDER = env.str("ENGRAM_EMBEDDING_PROVIDER", default="local")
LLM_PROVIDER = env.str("ENGRAM_LLM_PROVIDER", default="heuristic")
LOCAL_EMBEDDING_THREADS = env.int("ENGRAM_LOCAL_EMBEDDING_THREADS", default=2)

# Provider secrets are encrypted at rest with a key derived from this value.
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY", default="")

# Circuit breaker around provider calls.
PROVIDER_BREAKER_FAILURE_THRESHOLD = env.int("ENGRAM_BREAKER_FAILURES", default=5)
PROVIDER_BREAKER_RESET_SECONDS = env.int("ENGRAM_BREAKER_RESET_SECONDS", default=30)
PROVIDER_HTTP_TIMEOUT_SECONDS = env.float("ENGRAM_PROVIDER_TIMEOUT_SECONDS", default=20.0)
