"""Database routing (DESIGN §2, STYLE rule 14).

Reads stay on ``default`` unless a selector opts in to ``heavy_read`` with ``.using()``;
every write and every migration goes to ``default``. Under test settings
(``ENGRAM_ROUTER_STRICT``) a write aimed at the replica raises instead of being redirected.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

PRIMARY = "default"
HEAVY_READ = "heavy_read"
KNOWN_ALIASES = frozenset({PRIMARY, HEAVY_READ})


class ReplicaWriteError(RuntimeError):
    pass


class PrimaryReplicaRouter:
    def db_for_read(self, model: type[models.Model], **hints: Any) -> str | None:
        return None

    def db_for_write(self, model: type[models.Model], **hints: Any) -> str | None:
        instance = hints.get("instance")
        state = getattr(instance, "_state", None)
        if getattr(state, "db", None) == HEAVY_READ and getattr(
            settings, "ENGRAM_ROUTER_STRICT", False
        ):
            raise ReplicaWriteError(f"{model.__name__} was loaded from heavy_read; refusing write")
        return PRIMARY

    def allow_relation(self, obj1: models.Model, obj2: models.Model, **hints: Any) -> bool | None:
        if obj1._state.db in KNOWN_ALIASES and obj2._state.db in KNOWN_ALIASES:
            return True
        return None

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return db == PRIMARY
