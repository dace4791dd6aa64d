"""Production only tightens security and demands the secrets and services (STYLE rule 13).

Half a configuration is refused before anything starts: without ``DATABASE_URL`` the base
settings would start an embedded database inside the container, without ``CELERY_BROKER_URL``
the filesystem broker would queue tasks no other container can see, and without ``REDIS_URL``
rate limits, breakers and the heavy-read semaphore would be counted per process. The check runs
before ``base`` is imported, so nothing (an embedded server included) has started when the
process exits with one line naming every missing variable.
"""

from config.env import env, require_production_environment

require_production_environment()

from config.settings.base import *  # noqa: E402 - only once the environment is complete

SECRET_KEY = env.str("DJANGO_SECRET_KEY")
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY")
DEBUG = False
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
