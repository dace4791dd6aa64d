"""Which versions of the subject's memories a read covers, by valid time (shared by recall's
scope, the keyword fallback and the list)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q


def valid_at(as_of: datetime) -> Q:
    """The rows whose fact held at ``as_of``: valid from then or earlier, and not ended by it
    (``valid_to`` is exclusive: the moment a successor begins belongs to the successor)."""
    return Q(valid_from__lte=as_of) & (Q(valid_to__isnull=True) | Q(valid_to__gt=as_of))


def in_time(*, include_superseded: bool, as_of: datetime | None) -> Q:
    """Which versions a read covers: the facts valid at ``as_of`` (superseded or not: a row
    replaced later was the value then); without it, the live rows, or every version with
    ``include_superseded``."""
    if as_of is not None:
        return valid_at(as_of)
    return Q() if include_superseded else Q(superseded_by_id__isnull=True)
