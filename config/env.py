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
