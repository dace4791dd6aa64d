"""Production only tightens security and demands the secrets (STYLE rule 13)."""

from config.env import env
from config.settings.base import *

SECRET_KEY = env.str("DJANGO_SECRET_KEY")
ENGRAM_ENCRYPTION_KEY = env.str("ENGRAM_ENCRYPTION_KEY")
DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
