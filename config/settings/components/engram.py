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
# ones by pgvector's iterative HNSW scan. Measured crossover at 1M rows (docs/memory.md):
# between 8k (exact faster) and 12k rows (ANN faster); 10k is also the default quota, so
# every subject within it is recalled exactly. Without the covering index (vectors wider
# than ~600 dims) the exact scan reads the heap and the crossover is nearer 4k.
MEMORY_EXACT_SCAN_MAX_ROWS = env.int("ENGRAM_MEMORY_EXACT_SCAN_MAX_ROWS", default=10_000)
MEMORY_HNSW_EF_SEARCH = env.int("ENGRAM_MEMORY_HNSW_EF_SEARCH", default=100)
MEMORY_HNSW_MAX_SCAN_TUPLES = env.int("ENGRAM_MEMORY_HNSW_MAX_SCAN_TUPLES", default=50_000)
# The ANN read takes this many candidates per requested result and keeps the nearest: the
# iterative scan walks on past its first (relaxed-order) finds. 1M rows, 20k-row subject, one
# HNSW build, 1,000 queries: recall@10 0.949 at 4 (some queries 0.0), 0.960 at 6, 0.967 at 8
# (worst query 0.7), 0.967 at 12; ef_search 100 → 200 changed nothing (docs/memory.md).
MEMORY_HNSW_CANDIDATES_PER_RESULT = env.int("ENGRAM_MEMORY_HNSW_CANDIDATES_PER_RESULT", default=8)
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

# Knowledge wiki (docs/knowledge.md has the measurements behind every threshold).
KNOWLEDGE_TITLE_MAX_CHARS = 300
KNOWLEDGE_BODY_MAX_CHARS = env.int("ENGRAM_KNOWLEDGE_BODY_MAX_CHARS", default=100_000)
KNOWLEDGE_TAGS_MAX = 32
KNOWLEDGE_QUERY_MAX_CHARS = 500
KNOWLEDGE_SESSION_ID_MAX_BYTES = 200
KNOWLEDGE_LIST_MAX_LIMIT = 200
KNOWLEDGE_SEARCH_DEFAULT_LIMIT = 10
KNOWLEDGE_SEARCH_MAX_LIMIT = 50
KNOWLEDGE_CONTEXT_DEFAULT_LIMIT = 5
KNOWLEDGE_CONTEXT_MAX_LIMIT = 10
KNOWLEDGE_CONTEXT_MAX_LINKED = 20
KNOWLEDGE_SNIPPET_CHARS = 240
KNOWLEDGE_REFERENCED_MAX_IDS = 50
# Novelty gate: cosine similarity (title + body, local model) to the nearest visible article.
KNOWLEDGE_DEDUPE_THRESHOLD = env.float("ENGRAM_KNOWLEDGE_DEDUPE_THRESHOLD", default=0.95)
KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD = env.float(
    "ENGRAM_KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD", default=0.60
)
# Hybrid search: reciprocal rank fusion constant (Cormack et al. 2009) and the regconfig.
KNOWLEDGE_RRF_K = 60
# Tenants with at most this many visible embedded articles are searched by an exact scan;
# larger ones by pgvector's iterative HNSW scan over published articles.
KNOWLEDGE_EXACT_SCAN_MAX_ROWS = env.int("ENGRAM_KNOWLEDGE_EXACT_SCAN_MAX_ROWS", default=4_000)
KNOWLEDGE_HNSW_EF_SEARCH = env.int("ENGRAM_KNOWLEDGE_HNSW_EF_SEARCH", default=100)
KNOWLEDGE_HNSW_MAX_SCAN_TUPLES = env.int("ENGRAM_KNOWLEDGE_HNSW_MAX_SCAN_TUPLES", default=20_000)
# answer_confidence: separation (robust z) of this query's top score from the rest of its
# own pool. Scale-free, so it survives a change of model, fusion or corpus size.
KNOWLEDGE_ANSWER_SEPARATION = env.float("ENGRAM_KNOWLEDGE_ANSWER_SEPARATION", default=4.0)
KNOWLEDGE_WEAK_SEPARATION = env.float("ENGRAM_KNOWLEDGE_WEAK_SEPARATION", default=3.0)
KNOWLEDGE_ANSWER_MIN_ROWS = 4
# Diversity selection (spec "Diversity selection on the knowledge half"); every knob is
# overridable per call through apps.knowledge.diversity.DiversityOptions.
KNOWLEDGE_DIVERSITY_ENABLED = env.bool("ENGRAM_KNOWLEDGE_DIVERSITY_ENABLED", default=True)
KNOWLEDGE_DIVERSITY_LAMBDA = env.float("ENGRAM_KNOWLEDGE_DIVERSITY_LAMBDA", default=0.7)
KNOWLEDGE_DIVERSITY_NEAR_DUP_THRESHOLD = env.float(
    "ENGRAM_KNOWLEDGE_DIVERSITY_NEAR_DUP_THRESHOLD", default=0.95
)
KNOWLEDGE_DIVERSITY_OVER_FETCH = env.int("ENGRAM_KNOWLEDGE_DIVERSITY_OVER_FETCH", default=3)
KNOWLEDGE_DIVERSITY_MAX_POOL = env.int("ENGRAM_KNOWLEDGE_DIVERSITY_MAX_POOL", default=50)
# How long a session remembers which articles it was shown (best effort, in the cache).
KNOWLEDGE_RECALL_HISTORY_TTL_SECONDS = env.int(
    "ENGRAM_KNOWLEDGE_RECALL_HISTORY_TTL_SECONDS", default=6 * 3600
)

# Promotion (spec "Promotion lifecycle"; docs/promotion.md).
PROMOTION_CONFIDENCE_THRESHOLD = env.float("ENGRAM_PROMOTION_CONFIDENCE_THRESHOLD", default=0.6)
PROMOTION_MAX_CANDIDATES = env.int("ENGRAM_PROMOTION_MAX_CANDIDATES", default=20)
PROMOTION_WINDOW_MAX_TURNS = env.int("ENGRAM_PROMOTION_WINDOW_MAX_TURNS", default=60)
PROMOTION_WINDOW_MAX_CHARS = env.int("ENGRAM_PROMOTION_WINDOW_MAX_CHARS", default=24_000)
# Compiles per tenant per hour (LLM spend bound), counting completed and in-flight jobs.
PROMOTION_BUDGET_PER_HOUR = env.int("ENGRAM_PROMOTION_BUDGET_PER_HOUR", default=60)
# A paraphrase at or above this cosine similarity supersedes the prior *promoted* row.
PROMOTION_NEAR_DUPLICATE_THRESHOLD = env.float(
    "ENGRAM_PROMOTION_NEAR_DUPLICATE_THRESHOLD", default=0.9
)
# Sweep: every interval, promote sessions whose last turn is older than the idle delay and
# that are still inside the window (oldest-active first, bounded per run).
# Invariant (asserted at start-up): interval < window < session TTL.
PROMOTION_SWEEP_INTERVAL_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_INTERVAL_SECONDS", default=3_600)
PROMOTION_SWEEP_WINDOW_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_WINDOW_SECONDS", default=6 * 3_600)
PROMOTION_SWEEP_IDLE_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_IDLE_SECONDS", default=15 * 60)
PROMOTION_SWEEP_MAX_SESSIONS = env.int("ENGRAM_PROMOTION_SWEEP_MAX_SESSIONS", default=200)
# The session TTL the invariant is checked against: the default TTL clients are told to use.
SESSION_DEFAULT_TTL_SECONDS = env.int("ENGRAM_SESSION_DEFAULT_TTL_SECONDS", default=24 * 3_600)

# Merged recall (apps/recall).
RECALL_DEFAULT_LIMIT = 10
RECALL_MAX_LIMIT = 50

# Graduation (spec "Graduation — HOT memory → durable knowledge").
MEMORY_GRADUATION_RECALL_THRESHOLD = env.int("ENGRAM_MEMORY_GRADUATION_RECALL_THRESHOLD", default=3)
MEMORY_GRADUATION_MAX_PER_RUN = env.int("ENGRAM_MEMORY_GRADUATION_MAX_PER_RUN", default=50)
MEMORY_GRADUATION_SCAN_LIMIT = env.int("ENGRAM_MEMORY_GRADUATION_SCAN_LIMIT", default=500)
MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS = env.int(
    "ENGRAM_MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS", default=3_600
)

# Memory recall modes (docs/memory.md, "Recall modes"; figures in docs/benchmarks.md).
# Longest optional retrieval context a memory may carry (MemoryDraft.context).
MEMORY_CONTEXT_MAX_CHARS = env.int("ENGRAM_MEMORY_CONTEXT_MAX_CHARS", default=4_000)
# semantic | keyword | hybrid; hybrid measured best on LoCoMo (docs/benchmarks.md).
MEMORY_RECALL_DEFAULT_MODE = env.str("ENGRAM_MEMORY_RECALL_DEFAULT_MODE", default="hybrid")
# Candidates each leg hands to the fusion (at least the requested limit).
MEMORY_RECALL_FUSION_CANDIDATES = 50
# Weighted reciprocal rank fusion: score = sum(weight / (RRF_K + rank)) over the legs.
MEMORY_RECALL_RRF_K = 10
MEMORY_RECALL_SEMANTIC_WEIGHT = 1.0
MEMORY_RECALL_KEYWORD_WEIGHT = 1.5
# Okapi BM25 of the keyword leg, and how much an occurrence in a memory's context counts
# against one in its text.
MEMORY_RECALL_BM25_K1 = 1.2
MEMORY_RECALL_BM25_B = 0.75
MEMORY_RECALL_CONTEXT_TERM_WEIGHT = 0.5
# The keyword leg scores every matching row by term presence, then re-scores this many
# candidates per requested row with exact term frequencies (selectors/recall/keyword.py).
MEMORY_RECALL_KEYWORD_POOL_PER_RESULT = 3

# Idempotency-Key on writes (docs/memory.md, "Retry-safe writes"). A key's first response is
# replayed for this long; a claim still unanswered after the lease (its request crashed) may
# be taken over by a retry, so the lease must exceed the slowest write.
IDEMPOTENCY_TTL_SECONDS = env.int("ENGRAM_IDEMPOTENCY_TTL_SECONDS", default=24 * 3600)
IDEMPOTENCY_LEASE_SECONDS = env.int("ENGRAM_IDEMPOTENCY_LEASE_SECONDS", default=600)
IDEMPOTENCY_PRUNE_INTERVAL_SECONDS = env.int(
    "ENGRAM_IDEMPOTENCY_PRUNE_INTERVAL_SECONDS", default=3600
)

# How long a web process may authenticate a key from memory: the bound on how long a
# revocation or a tenant halt made elsewhere takes to reach it. 0 disables the cache.
API_KEY_CACHE_SECONDS = env.int("ENGRAM_API_KEY_CACHE_SECONDS", default=5)
