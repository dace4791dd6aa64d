"""A mixed write of both tiers: every item validated first, then one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

from apps.core.db.transactions import unit_of_work
from apps.memory.models import Memory, SessionMemory
from apps.memory.services.long_term import memory_create_many
from apps.memory.services.rows import MemoryDraft
from apps.memory.services.sessions import (
    SessionTurnDraft,
    session_append_many,
    session_drafts_validate,
)
from apps.tenancy.models import Tenant


def memory_write_batch(
    *,
    tenant: Tenant,
    subject_id: str,
    memories: Sequence[MemoryDraft],
    turns: Sequence[SessionTurnDraft],
) -> tuple[list[Memory], list[SessionMemory]]:
    """Write long-term memories and session turns all-or-nothing across both tiers.

    The session checks run before anything is written, and both tiers commit in one
    transaction, so an invalid item or a quota overflow in either tier leaves no row behind
    (a client's retry then cannot duplicate the half that would otherwise have committed).
    """
    session_drafts_validate(drafts=turns)
    # One tier alone is already one service transaction; only both together need the unit of
    # work that makes them commit or fail as one (a savepoint per tier costs four round trips).
    with unit_of_work() if memories and turns else nullcontext():
        written = memory_create_many(tenant=tenant, subject_id=subject_id, drafts=memories)
        rows = session_append_many(tenant=tenant, subject_id=subject_id, drafts=turns)
    return written, rows
