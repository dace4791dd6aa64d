"""Celery and the beat schedule, in one place (STYLE rule 12).

https://docs.celeryq.dev/en/stable/userguide/configuration.html
Without CELERY_BROKER_URL the filesystem broker under $ENGRAM_DATA_DIR/broker is used, so
`make run` needs nothing but Python; production sets a redis:// URL.
"""

from datetime import timedelta

from config.env import data_dir, env
from config.settings.components.memory import MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS
from config.settings.components.promotion import PROMOTION_SWEEP_INTERVAL_SECONDS
from config.settings.components.tenancy import IDEMPOTENCY_PRUNE_INTERVAL_SECONDS

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
#: How often a worker on the filesystem broker looks for new messages (kombu's default, 1 s,
#: is most of a write's wait to become searchable); a listing of a near-empty folder is cheap.
FILESYSTEM_BROKER_POLLING_INTERVAL_S = env.float(
    "ENGRAM_FILESYSTEM_BROKER_POLLING_INTERVAL_S", default=0.05
)
#: A transport class overriding the URL's scheme (None: the scheme's own).
CELERY_BROKER_TRANSPORT: str | None = None
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = data_dir() / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    # kombu's transport with messages renamed into place whole (apps/core/broker.py).
    CELERY_BROKER_TRANSPORT = "apps.core.broker:FilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": FILESYSTEM_BROKER_POLLING_INTERVAL_S,
    }
elif CELERY_BROKER_URL.startswith("redis://"):
    # kombu's transport with a lost broker kept a connection error, so a worker reconnects
    # instead of exiting (apps/core/broker.py).
    CELERY_BROKER_TRANSPORT = "apps.core.broker:RedisTransport"
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# How long the worker's ETA scheduler may sleep between checks (Celery's default is 1 s): the
# embedding drain is sent with a sub-second countdown (MEMORY_EMBEDDING_WAKE_DELAY_SECONDS), and
# a 1 s tick would add up to a second to every vector's arrival.
CELERY_WORKER_TIMER_PRECISION = 0.05
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=300)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=240)
CELERY_TIMEZONE = "UTC"
# Beat runs from django-celery-beat's tables, seeded from CELERY_BEAT_SCHEDULE below by
# `migrate` and at beat start (apps/core/schedules.py); `manage.py schedule` changes them.
# Beat polls the tables at least this often, so a changed interval applies within it.
CELERY_BEAT_SCHEDULER = "apps.core.beat:SeededDatabaseScheduler"
CELERY_BEAT_MAX_LOOP_INTERVAL = env.int("ENGRAM_BEAT_MAX_LOOP_INTERVAL_SECONDS", default=5)

# Intervals in seconds, shared with the start-up invariant checks.
SESSION_PRUNE_INTERVAL_S = env.int("ENGRAM_SESSION_PRUNE_INTERVAL_S", default=600)
EMBEDDING_BACKFILL_INTERVAL_S = env.int("ENGRAM_EMBEDDING_BACKFILL_INTERVAL_S", default=60)
EMBEDDING_MIGRATION_INTERVAL_S = env.int("ENGRAM_EMBEDDING_MIGRATION_INTERVAL_S", default=60)

CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Delete expired session turns.
    "memory.prune_expired_sessions": {
        "task": "memory.prune_expired_sessions",
        "schedule": timedelta(seconds=SESSION_PRUNE_INTERVAL_S),
    },
    # Compile idle sessions into long-term memories (oldest-active first, budgeted).
    "memory.promotion_sweep": {
        "task": "memory.promotion_sweep",
        "schedule": timedelta(seconds=PROMOTION_SWEEP_INTERVAL_SECONDS),
    },
    # Graduate hot memories into the knowledge wiki (bounded, round-robin across tenants).
    "memory.graduation_sweep": {
        "task": "memory.graduation_sweep",
        "schedule": timedelta(seconds=MEMORY_GRADUATION_SWEEP_INTERVAL_SECONDS),
    },
    # Embed any long-term memory whose on-commit task was lost or gave up.
    "memory.backfill_embeddings": {
        "task": "memory.backfill_embeddings",
        "schedule": timedelta(seconds=EMBEDDING_BACKFILL_INTERVAL_S),
    },
    # Embed any knowledge article whose on-commit task was lost or gave up.
    "knowledge.backfill_embeddings": {
        "task": "knowledge.backfill_embeddings",
        "schedule": timedelta(seconds=EMBEDDING_BACKFILL_INTERVAL_S),
    },
    # Re-embed, a bounded batch per tenant, the rows another model than the tenant's current
    # one embedded (after a model change): docs/operators.md, "Changing the embedding model".
    "dataops.migrate_embeddings": {
        "task": "dataops.migrate_embeddings",
        "schedule": timedelta(seconds=EMBEDDING_MIGRATION_INTERVAL_S),
    },
    # Forget Idempotency-Key records past their 24 h replay window.
    "tenancy.prune_idempotency_records": {
        "task": "tenancy.prune_idempotency_records",
        "schedule": timedelta(seconds=IDEMPOTENCY_PRUNE_INTERVAL_SECONDS),
    },
}
