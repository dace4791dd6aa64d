"""Constraint violations as domain errors: the database's unique indexes are the backstop of
checks a service makes (no check-then-act), and their violation answers like the check."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager

from django.db import IntegrityError


def violated_constraint(exc: IntegrityError) -> str | None:
    """The name of the constraint Postgres reports ``exc`` violated, when it reports one."""
    diagnostics = getattr(exc.__cause__, "diag", None)
    name: str | None = getattr(diagnostics, "constraint_name", None)
    return name


@contextmanager
def raise_on_violation(
    constraints: Collection[str], error: Callable[[], Exception]
) -> Iterator[None]:
    """Raise ``error()`` for an ``IntegrityError`` from one of ``constraints``; any other
    ``IntegrityError`` passes through."""
    try:
        yield
    except IntegrityError as exc:
        if violated_constraint(exc) in constraints:
            raise error() from exc
        raise
