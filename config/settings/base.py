"""Settings shared by every environment. Concerns live in ``components/``."""

from config.env import env
from config.settings.components.celery import *
from config.settings.components.core import *
from config.settings.components.databases import *
from config.settings.components.drf import *
from config.settings.components.knowledge import *
from config.settings.components.logging import *
from config.settings.components.memory import *
from config.settings.components.promotion import *
from config.settings.components.providers import *
from config.settings.components.recall import *
from config.settings.components.spectacular import *
from config.settings.components.tenancy import *

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="engram-insecure-development-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
# Django's test client's "testserver" is added by the test settings only.
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "apps.core",
    "apps.tenancy",
    "apps.providers",
    "apps.projects",
    "apps.memory",
    "apps.knowledge",
    "apps.recall",
    "apps.dataops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # The API docs' Swagger UI and ReDoc, from the web process itself (below).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Every API view is CSRF-exempt (bearer keys, no cookies); the middleware guards anything
    # else a later change might add, and keeps `check --deploy` clean.
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "apps.core.middleware.InputContractMiddleware",
    "apps.core.middleware.HeavyReadRoutingMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Static files are the API docs' Swagger UI and ReDoc (drf-spectacular-sidecar), served by
# WhiteNoise from the installed apps, found once at start-up: every deployment serves them with
# no CDN, no proxy route and no collectstatic step.
# https://whitenoise.readthedocs.io/en/stable/django.html
STATIC_URL = "static/"
WHITENOISE_USE_FINDERS = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# https://docs.djangoproject.com/en/5.2/topics/cache/
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    # apps/core/cache.py: while Redis cannot be reached each process counts in its own memory,
    # and a cache call that cannot reach it gives up within these timeouts, not the OS's.
    CACHES = {
        "default": {
            "BACKEND": "apps.core.cache.FailoverRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
