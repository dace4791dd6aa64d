"""`make run`: the embedded defaults, plus the measurement lab.

Debug mode stays off unless asked for (``DJANGO_DEBUG=true``): `make run` is how Engram is run
on one machine, and debug mode keeps every SQL statement of every request in memory.
"""

from config.env import env
from config.settings.base import *

DEBUG = env.bool("DJANGO_DEBUG", default=False)

# The measurement lab (benchmarks, evaluations, calibration) exists on developer machines only.
INSTALLED_APPS = [*INSTALLED_APPS, "lab"]
