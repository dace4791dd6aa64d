"""Erasure's one step, shared by every app's share of a subject or tenant erasure: count the
rows, then delete them unless it is a dry run, so a dry run reports exactly what the real
erasure would delete."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet


def erase_rows(rows: QuerySet[Any], *, dry_run: bool) -> int:
    """Delete ``rows`` (only count them with ``dry_run``); return how many there were."""
    count = rows.count()
    if not dry_run:
        rows.delete()
    return count


def erase_kinds(kinds: Mapping[str, QuerySet[Any]], *, dry_run: bool) -> dict[str, int]:
    """:func:`erase_rows` for each kind, in the mapping's order: list a kind before the kinds
    its rows point to."""
    return {kind: erase_rows(rows, dry_run=dry_run) for kind, rows in kinds.items()}
