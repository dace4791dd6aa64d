"""Structured one-line logs. https://docs.djangoproject.com/en/5.2/topics/logging/"""

from config.env import env

LOG_LEVEL = env.str("ENGRAM_LOG_LEVEL", default="INFO")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        "django.db.backends": {"level": "WARNING"},
    },
}
