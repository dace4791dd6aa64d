"""Embedding and LLM providers (docs/embeddings.md, docs/configuration.md)."""

from config.env import env

# One deployment pins one dimension (DESIGN §3).
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_PROVIDER = env.str("ENGRAM_EMBEDDING_PROVIDER", default="local")
LLM_PROVIDER = env.str("ENGRAM_LLM_PROVIDER", default="heuristic")
LOCAL_EMBEDDING_THREADS = env.int("ENGRAM_LOCAL_EMBEDDING_THREADS", default=2)
# The `local` provider's model (apps/providers/embedders/local_onnx.py, docs/embeddings.md):
# "minilm" (all-MiniLM-L6-v2) or "bge-small" (bge-small-en-v1.5: better recall, but cosines
# on another scale, so the similarity thresholds calibrated on MiniLM (knowledge gate, recall
# bump, promotion) do not hold for it yet). Both are 384-d, but their vectors are not
# comparable: changing it moves every tenant on it to the new model in the background (recall
# never compares the two; docs/operators.md, "Changing the embedding model"). A deployment
# that sets the variable keeps its model when this default changes in a release.
LOCAL_EMBEDDING_MODEL = env.str("ENGRAM_LOCAL_EMBEDDING_MODEL", default="minilm")
# With "minilm", recall's queries run on an int8-product copy of the model (twice as fast;
# vectors within ~0.01 cosine of the exact ones). False: queries use the exact model too.
# "bge-small" runs int8 products for documents and queries alike and ignores it.
LOCAL_EMBEDDING_QUERY_INT8 = env.bool("ENGRAM_LOCAL_EMBEDDING_QUERY_INT8", default=True)
# Recall's query vectors (apps/providers/query_vectors.py): how many distinct (caller,
# provider, text) vectors each process keeps (0 keeps none; ~1.5 KB each at 384 dimensions),
# and how many queries a process embeds at once beside the keyword leg.
EMBEDDING_QUERY_CACHE_SIZE = env.int("ENGRAM_EMBEDDING_QUERY_CACHE_SIZE", default=2048)
EMBEDDING_QUERY_THREADS = env.int("ENGRAM_EMBEDDING_QUERY_THREADS", default=4)
EMBEDDING_MODEL = env.str("ENGRAM_EMBEDDING_MODEL", default="")
EMBEDDING_BASE_URL = env.str("ENGRAM_EMBEDDING_BASE_URL", default="")
EMBEDDING_API_KEY = env.str("ENGRAM_EMBEDDING_API_KEY", default="")
LLM_MODEL = env.str("ENGRAM_LLM_MODEL", default="")
LLM_BASE_URL = env.str("ENGRAM_LLM_BASE_URL", default="")
LLM_API_KEY = env.str("ENGRAM_LLM_API_KEY", default="")

# Provider secrets are encrypted at rest with a key derived from this value
# (apps/tenancy/encryption.py). Empty here: production demands it, local settings generate one.
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY", default="")
# Older keys still accepted for reading, newest first (a rotation); secrets are written under
# ENGRAM_ENCRYPTION_KEY alone, and `rotate_provider_secrets` moves the old ones onto it.
ENGRAM_ENCRYPTION_KEY_FALLBACKS = env.list("ENGRAM_ENCRYPTION_KEY_FALLBACKS", default=[])

# Circuit breaker around provider calls.
PROVIDER_BREAKER_FAILURE_THRESHOLD = env.int("ENGRAM_BREAKER_FAILURES", default=5)
PROVIDER_BREAKER_RESET_SECONDS = env.int("ENGRAM_BREAKER_RESET_SECONDS", default=30)
PROVIDER_HTTP_TIMEOUT_SECONDS = env.float("ENGRAM_PROVIDER_TIMEOUT_SECONDS", default=20.0)

# The background embedding pipeline (memories and articles alike).
EMBEDDING_BATCH_SIZE = env.int("ENGRAM_EMBEDDING_BATCH_SIZE", default=64)
# The background model migration (docs/operators.md, "Changing the embedding model"): rows a
# model other than their tenant's current one embedded are re-embedded, oldest first, at most
# this many per run across the tenants that have such rows (a fair share each, at least one
# batch); 0 turns it off. Its progress, for `reembed --status` and /metrics, is counted at most
# once per EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS.
EMBEDDING_MIGRATION_ROWS_PER_RUN = env.int("ENGRAM_EMBEDDING_MIGRATION_ROWS_PER_RUN", default=2000)
EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS = env.int(
    "ENGRAM_EMBEDDING_MIGRATION_STATUS_CACHE_SECONDS", default=60
)
EMBEDDING_RETRY_COUNTDOWN_SECONDS = env.int("ENGRAM_EMBEDDING_RETRY_SECONDS", default=30)
# Long-term memories: one drain per tenant claims pending rows EMBEDDING_BATCH_SIZE at a time
# (one provider call each), at most this many batches per task before it hands over to a
# fresh task; a wake-up while one is queued is a no-op for this many seconds.
MEMORY_EMBEDDING_DRAIN_MAX_BATCHES = env.int(
    "ENGRAM_MEMORY_EMBEDDING_DRAIN_MAX_BATCHES", default=32
)
MEMORY_EMBEDDING_WAKE_TTL_SECONDS = env.int("ENGRAM_MEMORY_EMBEDDING_WAKE_TTL_SECONDS", default=30)
# A woken drain starts this long after the write that woke it, so the writes that follow in
# that window join its first batch (one task and one provider call) instead of waking a task
# each; keyword recall finds them meanwhile. 0 starts it at once.
MEMORY_EMBEDDING_WAKE_DELAY_SECONDS = env.float(
    "ENGRAM_MEMORY_EMBEDDING_WAKE_DELAY_SECONDS", default=0.25
)
# After this many failed provider calls a pending row is left to the beat backfill (one call
# per row, after every other row); it stays keyword-searchable as `pending`.
MEMORY_EMBEDDING_MAX_FAILURES = env.int("ENGRAM_MEMORY_EMBEDDING_MAX_FAILURES", default=3)
