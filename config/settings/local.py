"""`make run`: the embedded defaults, plus the measurement lab.

Debug mode stays off unless asked for (``DJANGO_DEBUG=true``): `make run` is how Engram is run
on one machine, and debug mode keeps every SQL statement of every request in memory.
"""

from config.env import env, local_encryption_key
from config.settings.base import *

DEBUG = env.bool("DJANGO_DEBUG", default=False)

if not env.str("ENGRAM_ENCRYPTION_KEY", default=""):
    # Provider secrets are never encrypted under a public default: a random key, generated on
    # first start, kept in $ENGRAM_DATA_DIR/encryption.key (docs/configuration.md).
    ENGRAM_ENCRYPTION_KEY = local_encryption_key()
    # Before that key existed, secrets were encrypted under SECRET_KEY (by default a public
    # value): still read, and moved onto the new key by `rotate_provider_secrets` on start.
    ENGRAM_ENCRYPTION_KEY_FALLBACKS = [
        *env.list("ENGRAM_ENCRYPTION_KEY_FALLBACKS", default=[]),
        SECRET_KEY,
    ]

# The measurement lab (benchmarks, evaluations, calibration) exists on developer machines only.
INSTALLED_APPS = [*INSTALLED_APPS, "lab"]
