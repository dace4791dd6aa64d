"""Two database aliases (DESIGN §2): ``default`` (OLTP) and ``heavy_read`` (kNN recall, search).

Without DATABASE_URL an embedded PostgreSQL under $ENGRAM_DATA_DIR/pg is started or joined.
https://docs.djangoproject.com/en/5.2/ref/settings/#databases
"""

from typing import Any

from config.env import data_dir, env

DATABASE_ROUTERS = ["apps.core.db.routers.PrimaryReplicaRouter"]

# Statement timeouts in milliseconds. Heavy reads are bounded tighter so a runaway kNN scan
# fails fast and the caller degrades instead of holding a connection.
OLTP_STATEMENT_TIMEOUT_MS = env.int("ENGRAM_OLTP_STATEMENT_TIMEOUT_MS", default=30_000)
HEAVY_READ_STATEMENT_TIMEOUT_MS = env.int("ENGRAM_HEAVY_READ_STATEMENT_TIMEOUT_MS", default=5_000)
CONN_MAX_AGE = env.int("ENGRAM_DB_CONN_MAX_AGE", default=60)


# Heavy-read session defaults beyond the timeout. pgvector's iterative HNSW scan is on for the
# whole session, not only inside recall's ANN transaction (which also sets it locally), so a
# filtered vector read the planner sends to the HNSW index keeps walking the graph until the
# LIMIT is met: a plan flip costs time, never rows. Postgres keeps `hnsw.*` as a placeholder
# until the extension loads in the session, then validates it (an unknown value warns and
# falls back to off; a server without pgvector 0.8 drops it). Recall and search probe each
# connection for it (apps/core/db/iterative_scan.py): without it they never set it (that would
# be an error once pgvector is loaded) and report meta.ann_iterative_scan "unavailable".
# https://github.com/pgvector/pgvector#iterative-index-scans
# Prepared statements (below) run on generic plans. A custom plan is made for the values, and
# for a tenant or agent newer than the last ANALYZE the statistics say "hardly any rows", so
# the planner read the subject through the bare tenant index and joined by re-scanning it,
# several times a recall's usual CPU (docs/benchmarks/load.md, "A new tenant's plans").
# Postgres keeps such plans when left to choose, since their estimated cost is the lower one.
HEAVY_READ_SESSION_OPTIONS = (
    "-c hnsw.iterative_scan=relaxed_order -c plan_cache_mode=force_generic_plan"
)

# Recall's statements run on server-bound cursors (apps/core/db/cursors.py); psycopg prepares
# one once it has run this many times on a connection, so later runs skip parsing and
# planning, a third of a recall's time on the 100k-row benchmark. Only those cursors
# prepare: Django's default client-bound cursors never do. Empty disables it, for a pooler
# that cannot keep protocol-level prepared statements (PgBouncer before 1.21, or without
# max_prepared_statements). https://www.psycopg.org/psycopg3/docs/advanced/prepare.html
# The write path's own statements (the scope lock, the quota read, a memory's INSERT, the
# embedding wake) run on server-bound cursors on the primary too, and are prepared the same way
# (ENGRAM_OLTP_PREPARE_THRESHOLD): a memory's INSERT planned once per connection, not per
# write (docs/benchmarks/load.md, "Latest").


def _threshold(name: str) -> int | None:
    value = env.str(name, default="2")
    return int(value) if value.strip() else None


HEAVY_READ_PREPARE_THRESHOLD = _threshold("ENGRAM_HEAVY_READ_PREPARE_THRESHOLD")
OLTP_PREPARE_THRESHOLD = _threshold("ENGRAM_OLTP_PREPARE_THRESHOLD")


def _with_timeout(
    config: dict[str, Any], timeout_ms: int, extra: str = "", **connection_options: Any
) -> dict[str, Any]:
    options = {**config.get("OPTIONS", {}), **connection_options}
    options["options"] = f"-c statement_timeout={timeout_ms} {extra}".strip()
    return {
        **config,
        # Django's PostgreSQL backend with a health check that needs no round trip.
        "ENGINE": "apps.core.db.postgresql",
        "OPTIONS": options,
        "CONN_MAX_AGE": CONN_MAX_AGE,
        "CONN_HEALTH_CHECKS": True,
    }


if env.str("DATABASE_URL", default=""):
    EMBEDDED_POSTGRES_DIR = None
    _default = env.db_url("DATABASE_URL")
else:
    EMBEDDED_POSTGRES_DIR = data_dir() / "pg"
    _database_name = env.str("ENGRAM_EMBEDDED_DATABASE", default="engram")
    # The server is started (or joined) on a process's first connection, which fills in HOST
    # and PORT (apps/core/db/postgresql): settings alone start nothing. The engine is set for
    # every alias in _with_timeout.
    _default = {
        "NAME": _database_name,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": "",
        "PORT": "",
        "EMBEDDED_POSTGRES": {"PGDATA": EMBEDDED_POSTGRES_DIR, "DATABASE": _database_name},
    }

# A replica for heavy reads (apps/core/replica.py). Past the lag bound, or unreachable, heavy
# reads go to the primary and say so in meta.degraded_reason; the lag is measured at most once
# per check interval in each process.
HEAVY_READ_IS_REPLICA = bool(env.str("HEAVY_READ_DATABASE_URL", default=""))
HEAVY_READ_MAX_LAG_SECONDS = env.float("ENGRAM_HEAVY_READ_MAX_LAG_SECONDS", default=10.0)
HEAVY_READ_REPLICA_CHECK_SECONDS = env.float("ENGRAM_HEAVY_READ_REPLICA_CHECK_SECONDS", default=1.0)
_heavy_read = env.db_url("HEAVY_READ_DATABASE_URL") if HEAVY_READ_IS_REPLICA else dict(_default)
if HEAVY_READ_IS_REPLICA:
    # A replica that is down must cost a request little before it is bypassed.
    _heavy_read.setdefault("OPTIONS", {})["connect_timeout"] = 2

DATABASES = {
    "default": _with_timeout(
        _default, OLTP_STATEMENT_TIMEOUT_MS, prepare_threshold=OLTP_PREPARE_THRESHOLD
    ),
    "heavy_read": _with_timeout(
        _heavy_read,
        HEAVY_READ_STATEMENT_TIMEOUT_MS,
        extra=HEAVY_READ_SESSION_OPTIONS,
        prepare_threshold=HEAVY_READ_PREPARE_THRESHOLD,
    ),
}
