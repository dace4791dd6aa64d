"""The one place environment variables are read (STYLE rule 13)."""

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def data_dir() -> Path:
    """Root of all local state (embedded Postgres, filesystem broker, caches)."""
    path = Path(env.str("ENGRAM_DATA_DIR", default=str(BASE_DIR / ".data"))).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve()


#: Where local settings keep the provider-secret key they generate (under ENGRAM_DATA_DIR).
LOCAL_ENCRYPTION_KEY_FILE = "encryption.key"


def local_encryption_key() -> str:
    """The provider-secret key of a local deployment without ``ENGRAM_ENCRYPTION_KEY``:
    random, generated on first start and kept in ``$ENGRAM_DATA_DIR/encryption.key`` (0600),
    beside the database it protects.

    web, worker, beat and commands may start together and must agree on one key: the file is
    written aside (``mkstemp`` creates it 0600) and linked into place, which fails when it is
    already there, so it appears whole, once, and every process reads the same one.
    """
    path = data_dir() / LOCAL_ENCRYPTION_KEY_FILE
    if not path.exists():
        handle, aside = tempfile.mkstemp(dir=path.parent, prefix=f".{LOCAL_ENCRYPTION_KEY_FILE}.")
        try:
            with os.fdopen(handle, "w", encoding="ascii") as stream:
                stream.write(secrets.token_urlsafe(32) + "\n")
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
        finally:
            os.unlink(aside)
    return path.read_text(encoding="ascii").strip()


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
