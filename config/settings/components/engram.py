"""Engram's own knobs, each overridable by an environment variable."""

from config.env import env

# Embeddings (DESIGN §3). One deployment pins one dimension.
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_PROVIDER = env.str("ENGRAM_EMBEDDING_PROVIDER", default="local")
LLM_PROVIDER = env.str("ENGRAM_LLM_PROVIDER", default="heuristic")
LOCAL_EMBEDDING_THREADS = env.int("ENGRAM_LOCAL_EMBEDDING_THREADS", default=2)
EMBEDDING_MODEL = env.str("ENGRAM_EMBEDDING_MODEL", default="")
EMBEDDING_BASE_URL = env.str("ENGRAM_EMBEDDING_BASE_URL", default="")
EMBEDDING_API_KEY = env.str("ENGRAM_EMBEDDING_API_KEY", default="")
LLM_MODEL = env.str("ENGRAM_LLM_MODEL", default="")
LLM_BASE_URL = env.str("ENGRAM_LLM_BASE_URL", default="")
LLM_API_KEY = env.str("ENGRAM_LLM_API_KEY", default="")

# Provider secrets are encrypted at rest with a key derived from this value.
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY", default="")

# Circuit breaker around provider calls.
PROVIDER_BREAKER_FAILURE_THRESHOLD = env.int("ENGRAM_BREAKER_FAILURES", default=5)
PROVIDER_BREAKER_RESET_SECONDS = env.int("ENGRAM_BREAKER_RESET_SECONDS", default=30)
PROVIDER_HTTP_TIMEOUT_SECONDS = env.float("ENGRAM_PROVIDER_TIMEOUT_SECONDS", default=20.0)

# Memory tiers (docs/memory.md).
MEMORY_QUOTA_LIVE_ROWS = env.int("ENGRAM_MEMORY_QUOTA_LIVE_ROWS", default=10_000)
MEMORY_TEXT_MAX_CHARS = env.int("ENGRAM_MEMORY_TEXT_MAX_CHARS", default=8_000)
MEMORY_BATCH_MAX_ITEMS = 500
MEMORY_WRITE_RATE_LIMIT = env.int("ENGRAM_MEMORY_WRITE_RATE_LIMIT", default=600)
MEMORY_WRITE_RATE_WINDOW_SECONDS = env.int("ENGRAM_MEMORY_WRITE_RATE_WINDOW_SECONDS", default=60)
MEMORY_RECALL_DEFAULT_LIMIT = 10
MEMORY_RECALL_MAX_LIMIT = 100
MEMORY_LIST_MAX_LIMIT = 200
MEMORY_QUERY_MAX_CHARS = 500
# Subjects with at most this many live embedded rows are recalled by an exact scan; larger
# ones by pgvector's iterative HNSW scan. Measured crossover in docs/memory.md.
MEMORY_EXACT_SCAN_MAX_ROWS = env.int("ENGRAM_MEMORY_EXACT_SCAN_MAX_ROWS", default=4_000)
MEMORY_HNSW_EF_SEARCH = env.int("ENGRAM_MEMORY_HNSW_EF_SEARCH", default=100)
MEMORY_HNSW_MAX_SCAN_TUPLES = env.int("ENGRAM_MEMORY_HNSW_MAX_SCAN_TUPLES", default=50_000)
# Recall-count hotness signal (spec "Recall-count hotness signal").
MEMORY_RECALL_BUMP_MIN_SCORE = 0.6
MEMORY_RECALL_BUMP_COOLDOWN_SECONDS = 3_600
MEMORY_RECALL_BUMP_MAX_TASKS = 200
# Session tier.
SESSION_MAX_TTL_SECONDS = env.int("ENGRAM_SESSION_MAX_TTL_SECONDS", default=30 * 24 * 3600)
# Embedding pipeline.
EMBEDDING_BATCH_SIZE = env.int("ENGRAM_EMBEDDING_BATCH_SIZE", default=64)
EMBEDDING_RETRY_COUNTDOWN_SECONDS = env.int("ENGRAM_EMBEDDING_RETRY_SECONDS", default=30)
# Heavy-read concurrency cap per tenant; over it, heavy reads are shed and callers degrade.
HEAVY_READ_MAX_CONCURRENT_PER_TENANT = env.int("ENGRAM_HEAVY_READ_MAX_CONCURRENT", default=16)
