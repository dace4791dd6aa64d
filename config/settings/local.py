"""`make run`: the embedded defaults, debug on."""

from config.env import env
from config.settings.base import *

DEBUG = env.bool("DJANGO_DEBUG", default=True)
