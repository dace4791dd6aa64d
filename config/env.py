"""The one place environment variables are read (STYLE rule 13)."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def data_dir() -> Path:
    """Root of all local state (embedded Postgres, filesystem broker, caches)."""
    path = Path(env.str("ENGRAM_DATA_DIR", default=str(BASE_DIR / ".data"))).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


PRODUCTION_SETTINGS = "config.settings.production"
# What production refuses to start without (docs/deployment.md, "Production checklist").
PRODUCTION_REQUIRED = (
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "ENGRAM_ENCRYPTION_KEY",
)


def missing(names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are unset or blank in the environment, in the order given."""
    return [name for name in names if not env.str(name, default="").strip()]


def require_production_environment() -> None:
    """Exit the process with one line naming every missing variable, if any is."""
    if absent := missing(PRODUCTION_REQUIRED):
        raise SystemExit(
            "engram: production settings refuse to start; missing environment variables: "
            + ", ".join(absent)
        )
