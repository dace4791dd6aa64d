"""Merged recall over memory and knowledge (apps/recall; docs/recall.md)."""

from config.env import env

RECALL_DEFAULT_LIMIT = 10
RECALL_MAX_LIMIT = 50

# Reads by meaning (memory recall, merged recall, knowledge search) per (tenant, subject).
RECALL_RATE_LIMIT = env.int("ENGRAM_RECALL_RATE_LIMIT", default=1_200)
RECALL_RATE_WINDOW_SECONDS = env.int("ENGRAM_RECALL_RATE_WINDOW_SECONDS", default=60)
