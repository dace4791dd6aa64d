"""The spec's list envelope, one page of a queryset, for every list selector."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet

T = TypeVar("T", bound=Model)


@dataclass(frozen=True)
class Page(Generic[T]):
    """The spec's list envelope: ``results`` plus ``total_count``, ``limit`` and ``offset``."""

    results: list[T]
    total_count: int
    limit: int
    offset: int

    @property
    def meta(self) -> dict[str, int]:
        return {"total_count": self.total_count, "limit": self.limit, "offset": self.offset}


def paginate(queryset: QuerySet[T], *, limit: int, offset: int) -> Page[T]:
    """One page of ``queryset`` and its unpaginated count (two queries)."""
    return Page(
        results=list(queryset[offset : offset + limit]),
        total_count=queryset.count(),
        limit=limit,
        offset=offset,
    )
