"""Knowledge wiki (docs/knowledge.md has the measurements behind every threshold)."""

from config.env import env

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
# Articles stored per tenant and per author (the subject whose key wrote it, graduations
# included), archived ones too; the article past either → 409 article_quota_exceeded.
KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT = env.int(
    "ENGRAM_KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT", default=100_000
)
KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = env.int(
    "ENGRAM_KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR", default=10_000
)

# Novelty gate: cosine similarity (title + body) to the nearest visible article.
KNOWLEDGE_DEDUPE_THRESHOLD = env.float("ENGRAM_KNOWLEDGE_DEDUPE_THRESHOLD", default=0.95)
KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD = env.float(
    "ENGRAM_KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD", default=0.60
)

# Hybrid search: reciprocal rank fusion constant (Cormack et al. 2009).
KNOWLEDGE_RRF_K = 60
# Exact vector scan up to this many visible embedded articles, iterative HNSW above it.
KNOWLEDGE_EXACT_SCAN_MAX_ROWS = env.int("ENGRAM_KNOWLEDGE_EXACT_SCAN_MAX_ROWS", default=4_000)
KNOWLEDGE_HNSW_EF_SEARCH = env.int("ENGRAM_KNOWLEDGE_HNSW_EF_SEARCH", default=100)
KNOWLEDGE_HNSW_MAX_SCAN_TUPLES = env.int("ENGRAM_KNOWLEDGE_HNSW_MAX_SCAN_TUPLES", default=20_000)

# answer_confidence: robust z of the top score against the rest of its own pool (scale-free,
# so it survives a change of model, fusion or corpus size).
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
