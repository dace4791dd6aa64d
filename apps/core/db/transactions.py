"""The one way a write opens its transaction on the primary.

A service's writes commit together in :func:`write_transaction`, which is durable: a service
is never silently folded into a caller's transaction and believed committed when it is not.

One caller holds services' writes on purpose: a write request that carries an
``Idempotency-Key`` runs in :func:`request_transaction`, so its writes and the response kept
for its key commit together or not at all. A retry after a lost connection then either finds
the response (the write committed) or runs again (nothing did); it never applies a write
twice because the database went away between the write's commit and the key's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

from apps.core.db.routers import PRIMARY

_in_request_transaction: ContextVar[bool] = ContextVar("in_request_transaction", default=False)


@contextmanager
def write_transaction() -> Iterator[None]:
    """Open a service's transaction: durable, except inside :func:`request_transaction`."""
    with transaction.atomic(using=PRIMARY, durable=not _in_request_transaction.get()):
        yield


@contextmanager
def request_transaction() -> Iterator[None]:
    """Hold every service transaction of one request in a single durable transaction."""
    with transaction.atomic(using=PRIMARY, durable=True):
        token = _in_request_transaction.set(True)
        try:
            yield
        finally:
            _in_request_transaction.reset(token)
