"""API keys and write safety (apps/tenancy; docs/memory.md, "Retry-safe writes")."""

from config.env import data_dir, env

# A key's first response is replayed for this long; a claim still unanswered after the lease
# (its request crashed) may be taken over by a retry, so the lease must exceed the slowest write.
# A database outage orphans the claims of the requests it failed (their release cannot reach
# the database), and their retries wait out the lease: twice gunicorn's 30 s worker timeout.
IDEMPOTENCY_TTL_SECONDS = env.int("ENGRAM_IDEMPOTENCY_TTL_SECONDS", default=24 * 3600)
IDEMPOTENCY_LEASE_SECONDS = env.int("ENGRAM_IDEMPOTENCY_LEASE_SECONDS", default=60)
IDEMPOTENCY_PRUNE_INTERVAL_SECONDS = env.int(
    "ENGRAM_IDEMPOTENCY_PRUNE_INTERVAL_SECONDS", default=3600
)

# How long a web process may authenticate a key from memory. A revocation or a tenant halt
# reaches every process sharing the cache (REDIS_URL) or this machine's data dir at once (the
# file below); this TTL bounds only a process that shares neither. 0 disables the cache.
# docs/operators.md, "Revocation".
API_KEY_CACHE_SECONDS = env.int("ENGRAM_API_KEY_CACHE_SECONDS", default=5)
API_KEY_CHANGES_FILE = data_dir() / "api-key-changes"

# Failed authentications (401 authentication_failed) one source address may make per window;
# past it every request from that address that presents a key is 429
# authentication_rate_limited, before any key lookup, until the window ends.
AUTH_FAILURE_LIMIT = env.int("ENGRAM_AUTH_FAILURE_LIMIT", default=30)
AUTH_FAILURE_WINDOW_SECONDS = env.int("ENGRAM_AUTH_FAILURE_WINDOW_SECONDS", default=60)
