"""Promotion of sessions into long-term memories (spec "Promotion lifecycle"; docs/promotion.md)."""

from config.env import env

PROMOTION_CONFIDENCE_THRESHOLD = env.float("ENGRAM_PROMOTION_CONFIDENCE_THRESHOLD", default=0.6)
PROMOTION_MAX_CANDIDATES = env.int("ENGRAM_PROMOTION_MAX_CANDIDATES", default=20)
PROMOTION_WINDOW_MAX_TURNS = env.int("ENGRAM_PROMOTION_WINDOW_MAX_TURNS", default=60)
PROMOTION_WINDOW_MAX_CHARS = env.int("ENGRAM_PROMOTION_WINDOW_MAX_CHARS", default=24_000)
# Compiles per tenant per hour (LLM spend bound), counting completed and in-flight jobs.
PROMOTION_BUDGET_PER_HOUR = env.int("ENGRAM_PROMOTION_BUDGET_PER_HOUR", default=60)
# Each subject's share of it: one agent cannot spend the whole tenant's budget.
PROMOTION_SUBJECT_BUDGET_PER_HOUR = env.int("ENGRAM_PROMOTION_SUBJECT_BUDGET_PER_HOUR", default=20)
# A paraphrase at or above this cosine similarity supersedes the prior *promoted* row.
PROMOTION_NEAR_DUPLICATE_THRESHOLD = env.float(
    "ENGRAM_PROMOTION_NEAR_DUPLICATE_THRESHOLD", default=0.9
)
# Where a compiler model is configured, it decides which promoted statements change a stored
# fact, in place of the offline rules (apps/memory/services/promotion_changes.py): one more
# call per promotion, shown the subject's memories nearest each statement, at most KNOWN_MAX.
PROMOTION_MODEL_DECIDES_CHANGES = env.bool("ENGRAM_PROMOTION_MODEL_DECIDES_CHANGES", default=True)
PROMOTION_CHANGES_KNOWN_PER_STATEMENT = env.int(
    "ENGRAM_PROMOTION_CHANGES_KNOWN_PER_STATEMENT", default=3
)
PROMOTION_CHANGES_KNOWN_MAX = env.int("ENGRAM_PROMOTION_CHANGES_KNOWN_MAX", default=30)
# Sweep: every interval, promote sessions whose last turn is older than the idle delay and
# that are still inside the window (oldest-active first, bounded per run).
# Invariant (asserted at start-up): interval < window < session TTL.
PROMOTION_SWEEP_INTERVAL_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_INTERVAL_SECONDS", default=3_600)
PROMOTION_SWEEP_WINDOW_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_WINDOW_SECONDS", default=6 * 3_600)
PROMOTION_SWEEP_IDLE_SECONDS = env.int("ENGRAM_PROMOTION_SWEEP_IDLE_SECONDS", default=15 * 60)
PROMOTION_SWEEP_MAX_SESSIONS = env.int("ENGRAM_PROMOTION_SWEEP_MAX_SESSIONS", default=200)
# A session whose last promotion job failed is not swept again for this long.
PROMOTION_SWEEP_RETRY_AFTER_SECONDS = env.int(
    "ENGRAM_PROMOTION_SWEEP_RETRY_AFTER_SECONDS", default=2 * 3_600
)
# Job lease: a queued or running job older than this was lost and is re-queued, or failed
# after this many claims. Must exceed CELERY_TASK_TIME_LIMIT (asserted at start-up).
PROMOTION_JOB_LEASE_SECONDS = env.int("ENGRAM_PROMOTION_JOB_LEASE_SECONDS", default=600)
PROMOTION_JOB_MAX_ATTEMPTS = env.int("ENGRAM_PROMOTION_JOB_MAX_ATTEMPTS", default=3)
# The session TTL the invariant is checked against: the default TTL clients are told to use.
SESSION_DEFAULT_TTL_SECONDS = env.int("ENGRAM_SESSION_DEFAULT_TTL_SECONDS", default=24 * 3_600)
# Expired turns of a session promotion has not processed are kept this long at most.
SESSION_PROMOTION_HOLD_MAX_SECONDS = env.int(
    "ENGRAM_SESSION_PROMOTION_HOLD_MAX_SECONDS", default=7 * 24 * 3_600
)
