"""Everyday fact changes through the services a client's writes and recalls reach.

For each change (``lab/eval_data/everyday_changes.json``), in a subject of its own: the older
fact (March), an unrelated fact (April) and the newer fact (September), each written alone as
``POST /memory`` writes it, then embedded. Reported per change: whether recall of its question
puts the newer fact first, whether the same recall ``as_of`` June puts the older fact first, and
whether the change detector retired the older memory. For each look-alike that is not a change:
whether the older memory stayed live. The tenant is removed at the end.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apps.memory.models import Memory
from apps.memory.selectors import memory_recall
from apps.memory.services import MemoryDraft, memory_create_many, memory_embed_pending
from apps.tenancy.models import Tenant
from apps.tenancy.services import tenant_create
from lab.locomo.harness import evaluation_tenant_remove

DEFAULT_PATH = Path(__file__).resolve().parent / "eval_data" / "everyday_changes.json"
OLDER = datetime(2025, 3, 1, tzinfo=UTC)
UNRELATED = datetime(2025, 4, 1, tzinfo=UTC)
NEWER = datetime(2025, 9, 1, tzinfo=UTC)
BETWEEN = datetime(2025, 6, 1, tzinfo=UTC)
UNRELATED_TEXT = "The user enjoys hiking on weekends."


@dataclass(frozen=True)
class Change:
    old: str
    new: str
    question: str


@dataclass(frozen=True)
class Unchanged:
    old: str
    new: str


def load_cases(path: Path = DEFAULT_PATH) -> tuple[list[Change], list[Unchanged]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return (
        [Change(**case) for case in data["changes"]],
        [Unchanged(**case) for case in data["unchanged"]],
    )


def _write(tenant: Tenant, subject_id: str, text: str, when: datetime) -> Memory:
    (memory,) = memory_create_many(
        tenant=tenant, subject_id=subject_id, drafts=[MemoryDraft(text=text, occurred_at=when)]
    )
    return memory


def _first(tenant: Tenant, subject_id: str, question: str, as_of: datetime | None) -> str | None:
    result = memory_recall(
        tenant=tenant, subject_id=subject_id, query=question, limit=3, as_of=as_of
    )
    return result.results[0].memory.text if result.results else None


def _change(tenant: Tenant, subject_id: str, case: Change) -> dict[str, Any]:
    written = [
        _write(tenant, subject_id, text, when)
        for text, when in ((case.old, OLDER), (UNRELATED_TEXT, UNRELATED), (case.new, NEWER))
    ]
    memory_embed_pending(memory_ids=[str(memory.pk) for memory in written])
    old = written[0]
    old.refresh_from_db()
    return {
        "old": case.old,
        "new": case.new,
        "newer_first": _first(tenant, subject_id, case.question, None) == case.new,
        "older_first_as_of": _first(tenant, subject_id, case.question, BETWEEN) == case.old,
        "retired": old.superseded_by_id is not None,
        "flagged": bool(old.conflicts_with),
    }


def _unchanged(tenant: Tenant, subject_id: str, case: Unchanged) -> dict[str, Any]:
    old = _write(tenant, subject_id, case.old, OLDER)
    _write(tenant, subject_id, case.new, NEWER)
    old.refresh_from_db()
    return {"old": case.old, "new": case.new, "kept": old.superseded_by_id is None}


def run(changes: list[Change], unchanged: list[Unchanged]) -> dict[str, Any]:
    started = time.perf_counter()
    tenant = tenant_create(
        slug=f"everyday-changes-{secrets.token_hex(4)}", name="everyday_change_eval"
    )
    try:
        per_change = [_change(tenant, f"change-{i}", case) for i, case in enumerate(changes)]
        per_unchanged = [
            _unchanged(tenant, f"unchanged-{i}", case) for i, case in enumerate(unchanged)
        ]
    finally:
        evaluation_tenant_remove(tenant=tenant)
    return {
        "changes": len(per_change),
        "newer_first": sum(c["newer_first"] for c in per_change),
        "older_first_as_of": sum(c["older_first_as_of"] for c in per_change),
        "both": sum(c["newer_first"] and c["older_first_as_of"] for c in per_change),
        "retired": sum(c["retired"] for c in per_change),
        "unchanged": len(per_unchanged),
        "unchanged_kept": sum(c["kept"] for c in per_unchanged),
        "per_change": per_change,
        "per_unchanged": per_unchanged,
        "seconds": round(time.perf_counter() - started, 1),
    }
