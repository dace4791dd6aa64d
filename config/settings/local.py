"""`make run`: the embedded defaults, debug on."""

from config.env import env
from config.settings.base import *

DEBUG = env.bool("DJANGO_DEBUG", default=True)

# The measurement lab (benchmarks, evaluations, calibration) exists on developer machines only.
INSTALLED_APPS = [*INSTALLED_APPS, "lab"]
