"""Cross-cutting request limits (apps/core)."""

from config.env import env

# Heavy-read concurrency cap per tenant; over it, heavy reads are shed and callers degrade.
HEAVY_READ_MAX_CONCURRENT_PER_TENANT = env.int("ENGRAM_HEAVY_READ_MAX_CONCURRENT", default=16)
# Each subject's share of its tenant's cap: one agent's flood of recalls cannot take every slot.
HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT = env.int(
    "ENGRAM_HEAVY_READ_MAX_CONCURRENT_PER_SUBJECT", default=8
)

# Requests one subject (an agent id, or any other key) may have in flight at once, across the
# web tier (without REDIS_URL, each web process its share); the next is 429
# `too_many_requests_in_flight` with Retry-After before any work. An agent that sends one
# request at a time never meets it; one on more connections cannot hold every web thread, or
# every core, its tenant's other agents need. Two rather than four: a flooding agent then has
# one request in each of `make run`'s two web processes instead of two, and a quiet agent of the
# tenant kept its p99 within 2x of its p99 alone (docs/benchmarks/flood.md).
SUBJECT_MAX_IN_FLIGHT = env.int("ENGRAM_SUBJECT_MAX_IN_FLIGHT", default=2)
# How many web processes serve requests: config/gunicorn.py sets it in each. Without a shared
# cache each process holds its share of the cap above.
WEB_PROCESSES = env.int("ENGRAM_WEB_PROCESSES", default=1)

# Retry-After on the 503 `database_unavailable` a request gets while the database is down.
DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS = env.int(
    "ENGRAM_DATABASE_UNAVAILABLE_RETRY_AFTER_SECONDS", default=2
)

# Rate limits per (tenant, subject) for the writes outside memory's item bucket
# (apps/tenancy/api_base.py names every bucket; docs/operators.md, "Request bounds").
# Writes that embed a whole article: article create and update, graduation.
EMBEDDING_WRITE_RATE_LIMIT = env.int("ENGRAM_EMBEDDING_WRITE_RATE_LIMIT", default=60)
EMBEDDING_WRITE_RATE_WINDOW_SECONDS = env.int(
    "ENGRAM_EMBEDDING_WRITE_RATE_WINDOW_SECONDS", default=60
)
# Every other write: deletes, archives, publishes, project changes, promotion requests, erasure.
WRITE_RATE_LIMIT = env.int("ENGRAM_WRITE_RATE_LIMIT", default=600)
WRITE_RATE_WINDOW_SECONDS = env.int("ENGRAM_WRITE_RATE_WINDOW_SECONDS", default=60)

# Proxies in front of the web processes that append to X-Forwarded-For (the load balancer):
# the source address of a request is the entry this many from the right; 0 trusts the header
# not at all and uses the TCP peer.
TRUSTED_PROXY_COUNT = env.int("ENGRAM_TRUSTED_PROXY_COUNT", default=0)
# The scheme a request arrived with follows X-Forwarded-Proto only behind those proxies (which
# must set it, overwriting the client's): without one, any client could claim HTTPS.
# https://docs.djangoproject.com/en/5.2/ref/settings/#secure-proxy-ssl-header
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXY_COUNT > 0 else None
