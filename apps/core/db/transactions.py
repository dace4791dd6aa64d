"""The one way a write opens its transaction on the primary.

A service's writes commit together in :func:`write_transaction`, which is durable: a service
is never silently folded into a caller's transaction and believed committed when it is not.

Services are composed on purpose with :func:`unit_of_work`: one durable transaction that the
services run inside it join, so their writes commit together or not at all. A batch writing
both tiers is one; so is a write request that carries an ``Idempotency-Key``, whose writes
and kept response commit together: a retry after a lost connection then either finds the
response (the write committed) or runs again (nothing did), and never applies a write twice
because the database went away between the write's commit and the key's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

from apps.core.db.routers import PRIMARY

_in_unit_of_work: ContextVar[bool] = ContextVar("in_unit_of_work", default=False)


@contextmanager
def write_transaction() -> Iterator[None]:
    """Open a service's transaction: durable, except inside a :func:`unit_of_work`."""
    with transaction.atomic(using=PRIMARY, durable=not _in_unit_of_work.get()):
        yield


@contextmanager
def unit_of_work() -> Iterator[None]:
    """One durable transaction that every service transaction opened inside it joins (a unit
    of work inside another joins the outer one)."""
    if _in_unit_of_work.get():
        with transaction.atomic(using=PRIMARY):
            yield
        return
    with transaction.atomic(using=PRIMARY, durable=True):
        token = _in_unit_of_work.set(True)
        try:
            yield
        finally:
            _in_unit_of_work.reset(token)


def savepoint() -> transaction.Atomic:
    """A savepoint inside a service's transaction: a constraint violation in it (caught as
    ``IntegrityError``) rolls back only the savepoint, and the transaction goes on."""
    return transaction.atomic(using=PRIMARY)
