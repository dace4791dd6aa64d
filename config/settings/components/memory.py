"""Memory tiers, recall and graduation (docs/memory.md; every figure in docs/configuration.md)."""

from config.env import env

MEMORY_QUOTA_LIVE_ROWS = env.int("ENGRAM_MEMORY_QUOTA_LIVE_ROWS", default=10_000)
# Superseded versions kept per subject: a supersede past it is refused (409), never pruned.
MEMORY_QUOTA_SUPERSEDED_ROWS = env.int("ENGRAM_MEMORY_QUOTA_SUPERSEDED_ROWS", default=10_000)
MEMORY_TEXT_MAX_CHARS = env.int("ENGRAM_MEMORY_TEXT_MAX_CHARS", default=8_000)
# Longest optional retrieval context a memory may carry (MemoryDraft.context).
MEMORY_CONTEXT_MAX_CHARS = env.int("ENGRAM_MEMORY_CONTEXT_MAX_CHARS", default=4_000)
MEMORY_BATCH_MAX_ITEMS = 500
# Service-derived retrieval context (apps/memory/services/derived_context.py): the memories
# on each side of a memory in its session, each cut to a length, the whole bounded.
MEMORY_DERIVED_CONTEXT_ENABLED = env.bool("ENGRAM_MEMORY_DERIVED_CONTEXT", default=True)
MEMORY_DERIVED_CONTEXT_NEIGHBOURS = env.int("ENGRAM_MEMORY_DERIVED_CONTEXT_NEIGHBOURS", default=2)
MEMORY_DERIVED_CONTEXT_NEIGHBOUR_MAX_CHARS = 400
MEMORY_DERIVED_CONTEXT_MAX_CHARS = 2_000
# Conversation turns written without a session key ("Speaker: text") are threaded by the
# service: a turn continues the subject's previous write when that was a turn at most this far
# apart in occurred_at (a pause longer than this starts a new conversation).
MEMORY_IMPLICIT_THREADS = env.bool("ENGRAM_MEMORY_IMPLICIT_THREADS", default=True)
MEMORY_IMPLICIT_THREAD_GAP_SECONDS = env.int(
    "ENGRAM_MEMORY_IMPLICIT_THREAD_GAP_SECONDS", default=30 * 60
)
# Facts that change (apps/memory/services/changes.py): a write that states a new value for an
# attribute a live memory holds (employer, city, diet, a setting) retires the older memory or
# flags both; the detector reads at most this many of the subject's memories per claim.
MEMORY_CHANGE_DETECTION_ENABLED = env.bool("ENGRAM_MEMORY_CHANGE_DETECTION", default=True)
MEMORY_CHANGE_CANDIDATES = 200
# An older memory is retired only when the changed statement is at least this share of what it
# says; a memory that says more than that is flagged instead (both kept, `conflicts_with`).
MEMORY_CHANGE_MIN_CLAIM_SHARE = 0.5
MEMORY_WRITE_RATE_LIMIT = env.int("ENGRAM_MEMORY_WRITE_RATE_LIMIT", default=600)
MEMORY_WRITE_RATE_WINDOW_SECONDS = env.int("ENGRAM_MEMORY_WRITE_RATE_WINDOW_SECONDS", default=60)
MEMORY_LIST_MAX_LIMIT = 200
MEMORY_RECALL_DEFAULT_LIMIT = 10
MEMORY_RECALL_MAX_LIMIT = 100
MEMORY_QUERY_MAX_CHARS = 500

# Session tier.
SESSION_MAX_TTL_SECONDS = env.int("ENGRAM_SESSION_MAX_TTL_SECONDS", default=30 * 24 * 3600)
# Stored session turns per subject (expired ones count until the prune deletes them), by
# number and by bytes (content plus metadata as JSON text, UTF-8); over either → 409.
SESSION_QUOTA_TURNS = env.int("ENGRAM_SESSION_QUOTA_TURNS", default=50_000)
SESSION_QUOTA_BYTES = env.int("ENGRAM_SESSION_QUOTA_BYTES", default=256 * 1024 * 1024)
# One page of a session's history: at most this many turns, and it stops before the turn that
# would pass the bytes (a single turn larger than them is still a page of its own).
SESSION_HISTORY_MAX_TURNS = 200
SESSION_HISTORY_PAGE_MAX_BYTES = env.int(
    "ENGRAM_SESSION_HISTORY_PAGE_MAX_BYTES", default=1024 * 1024
)

# Vector leg: exact scan up to this many live embedded rows per subject (the measured
# crossover, which the default quota sits inside), pgvector's iterative HNSW scan above it.
MEMORY_EXACT_SCAN_MAX_ROWS = env.int("ENGRAM_MEMORY_EXACT_SCAN_MAX_ROWS", default=10_000)
MEMORY_HNSW_EF_SEARCH = env.int("ENGRAM_MEMORY_HNSW_EF_SEARCH", default=100)
MEMORY_HNSW_MAX_SCAN_TUPLES = env.int("ENGRAM_MEMORY_HNSW_MAX_SCAN_TUPLES", default=50_000)
# ANN candidates read per requested result, re-ranked exactly (the iterative scan's first
# finds are in relaxed order).
MEMORY_HNSW_CANDIDATES_PER_RESULT = env.int("ENGRAM_MEMORY_HNSW_CANDIDATES_PER_RESULT", default=8)

# Recall modes: semantic | keyword | hybrid (hybrid measured best, docs/benchmarks/locomo.md).
MEMORY_RECALL_DEFAULT_MODE = env.str("ENGRAM_MEMORY_RECALL_DEFAULT_MODE", default="hybrid")
# Candidates each leg hands to the fusion (at least the requested limit).
MEMORY_RECALL_FUSION_CANDIDATES = 50
# How hybrid recall fuses its legs (docs/memory.md, "Recall modes"): "convex", a weighted sum
# of each leg's score min-max normalised over its candidates, with this weight on the vector
# leg's (chosen on LoCoMo's dev split, docs/benchmarks/locomo.md); or "rrf", below.
MEMORY_RECALL_FUSION = env.str("ENGRAM_MEMORY_RECALL_FUSION", default="convex")
MEMORY_RECALL_CONVEX_SEMANTIC_WEIGHT = 0.45
# A keyword leg whose best BM25 is below the first and whose candidates spread less than the
# second share of the best weighs in proportion (convex fusion): it matched only words most of
# the subject's memories hold ("the user" in a profile), and min-max would stretch differences
# of length to the whole scale. Every LoCoMo question's best BM25 is above the first.
MEMORY_RECALL_KEYWORD_CONFIDENT_BM25 = 1.0
MEMORY_RECALL_KEYWORD_CONFIDENT_SPREAD = 0.5
# Weighted reciprocal rank fusion: score = sum(weight / (RRF_K + rank)) over the legs.
MEMORY_RECALL_RRF_K = 10
MEMORY_RECALL_SEMANTIC_WEIGHT = 1.0
MEMORY_RECALL_KEYWORD_WEIGHT = 1.5
# Okapi BM25 of the keyword leg; a term in a memory's context counts this much of one in its text.
MEMORY_RECALL_BM25_K1 = 1.2
MEMORY_RECALL_BM25_B = 0.75
MEMORY_RECALL_CONTEXT_TERM_WEIGHT = 0.5
# Late interaction over hybrid's fused head (apps/memory/selectors/recall/rerank.py): how many
# fused candidates are re-ordered (0: off) and the weight of MaxSim in the blend. Runs only on
# a local model with a known token table. Chosen on LoCoMo's dev split (docs/benchmarks/locomo.md).
MEMORY_RECALL_RERANK_CANDIDATES = env.int("ENGRAM_MEMORY_RECALL_RERANK_CANDIDATES", default=30)
MEMORY_RECALL_RERANK_WEIGHT = env.float("ENGRAM_MEMORY_RECALL_RERANK_WEIGHT", default=0.4)
# MaxSim scores spread less than this over the head weigh in proportion: near-equal token
# matches (a handful of short memories) would otherwise be stretched to the whole scale.
MEMORY_RECALL_RERANK_CONFIDENT_SPREAD = 0.05
# A question about how an attribute stands (a job, a home, a diet, a partner, pets) puts this
# many of the head's memories that state it first (apps/memory/selectors/recall/attributes.py);
# 0: off.
MEMORY_RECALL_ATTRIBUTE_FIRST = env.int("ENGRAM_MEMORY_RECALL_ATTRIBUTE_FIRST", default=3)
# Time words in a question ("last spring") rank what held or happened then first
# (apps/memory/selectors/recall/windows.py); false: questions are read without them.
MEMORY_RECALL_TIME_WORDS = env.bool("ENGRAM_MEMORY_RECALL_TIME_WORDS", default=True)
# How many of the window's best hits go first; the usual ranking follows.
MEMORY_RECALL_TIME_WINDOW_FIRST = env.int("ENGRAM_MEMORY_RECALL_TIME_WINDOW_FIRST", default=3)
# For a question about how things stand now (apps/extraction/state_questions.py), two live
# hits at least this similar (cosine of their vectors) tell one fact: the later ranks first
# (apps/memory/selectors/recall/recency.py). Above 1: off. Scaled for the local MiniLM, where
# two statements about one thing in other words ("a big fan of pottery", "a break from
# pottery") sit at 0.5-0.7 and unrelated ones below 0.3.
MEMORY_RECALL_SAME_FACT_SIMILARITY = env.float(
    "ENGRAM_MEMORY_RECALL_SAME_FACT_SIMILARITY", default=0.5
)
MEMORY_RECALL_SAME_FACT_HEAD = env.int("ENGRAM_MEMORY_RECALL_SAME_FACT_HEAD", default=10)

# Recall-count hotness signal (spec "Recall-count hotness signal").
MEMORY_RECALL_BUMP_MIN_SCORE = 0.6
MEMORY_RECALL_BUMP_COOLDOWN_SECONDS = 3_600
# Memory ids waiting for the bump thread, per process; more are dropped.
MEMORY_RECALL_BUMP_MAX_PENDING = 10_000

# Graduation of hot memories into knowledge (spec "Graduation").
MEMORY_GRADUATION_RECALL_THRESHOLD = env.int("ENGRAM_MEMORY_GRADUATION_RECALL_THRESHOLD", default=3)
MEMORY_GRADUATION_MAX_PER_RUN = env.int("ENGRAM_MEMORY_GRADUATION_MAX_PER_RUN", default=50)
MEMORY_GRADUATION_SCAN_LIMIT = env.int("ENGRAM_MEMORY_GRADUATION_SCAN_LIMIT", default=500)
# A memory whose graduation raised waits this long (doubling per failure, at most a week).
MEMORY_GRADUATION_RETRY_AFTER_SECONDS = env.int(
    "ENGRAM_MEMORY_GRADUATION_RETRY_AFTER_SECONDS", default=6 * 3_600
)
MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS = env.int(
    "ENGRAM_MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS", default=3_600
)
