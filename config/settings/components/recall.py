"""Merged recall over memory and knowledge (apps/recall; docs/recall.md)."""

RECALL_DEFAULT_LIMIT = 10
RECALL_MAX_LIMIT = 50
