"""Memory rows written directly, for tests that read them (recall, list, counts, sweeps).

Tests about the write path use the services (``tests.memory.helpers.remember``); these
factories skip the quota, the scope lock, session threading and the embedding wake, and build
the columns those would have set so the row is indistinguishable to every read.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone
from factory.declarations import LazyAttribute, LazyFunction, Sequence, SubFactory, Trait
from factory.django import DjangoModelFactory

from apps.memory.models import (
    PROMOTION_IN_FLIGHT_STATUSES,
    Memory,
    MemorySource,
    PromotionJob,
    PromotionJobStatus,
    PromotionTrigger,
    SessionMemory,
    SessionRole,
)
from apps.providers.embeddings import embedding_content_hash
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_fingerprint
from tests.providers.vectors import fake_provider_vector
from tests.tenancy.factories import TenantFactory

#: The subject the ``agent`` fixture's key acts as (tests/conftest.py).
DEFAULT_SUBJECT = "agent-a"


class MemoryFactory(DjangoModelFactory[Memory]):
    """A live long-term memory, pending (no vector) unless built with ``embedded=True``.

    ``embedded=True`` stores the unit vector the test settings' fake provider gives ``text``
    (``tests.providers.vectors.fake_provider_vector``), so semantic recall ranks the row exactly
    as it ranks one the embedding drain filled in. An explicit ``embedding=`` (e.g.
    ``unit_vector(3)``) works too; ``embedded_at`` follows whichever vector the row has, as
    ``store_vectors`` sets both in one UPDATE. ``metadata`` naming a session is stored as
    given, but the row is not threaded into that session (``context_thread`` stays empty).
    """

    class Meta:
        model = Memory

    class Params:
        embedded = Trait(embedding=LazyAttribute(lambda o: fake_provider_vector(o.text)))

    tenant = SubFactory(TenantFactory)
    subject_id = DEFAULT_SUBJECT
    text = Sequence(lambda n: f"Memory number {n}.")
    embedding_content_hash = LazyAttribute(lambda o: embedding_content_hash(o.text))
    embedding = None
    embedded_at = LazyAttribute(lambda o: None if o.embedding is None else timezone.now())
    # The tenant's current model, as every vector write stamps it (an explicit value puts the
    # row in another model's space, as a vector written before a model change is).
    embedding_model = LazyAttribute(
        lambda o: "" if o.embedding is None else tenant_embedding_fingerprint(tenant=o.tenant)
    )
    source = MemorySource.EXPLICIT
    occurred_at = LazyFunction(timezone.now)
    valid_from = LazyAttribute(lambda o: o.occurred_at)


def memory_row(
    tenant: Tenant, subject_id: str, text: str, *, embedded: bool = True, **fields: Any
) -> Memory:
    """A memory as ``tests.memory.helpers.remember`` writes one (embedded by default), from the
    factory: the same row and vector for a read to find, at a fraction of the queries."""
    return MemoryFactory.create(
        tenant=tenant, subject_id=subject_id, text=text, embedded=embedded, **fields
    )


class SessionTurnFactory(DjangoModelFactory[SessionMemory]):
    """One session turn, live for an hour; ``expired=True`` gives a turn past its TTL.

    Turns of one ``(tenant, subject_id, session_id)`` read back in creation order (``seq``).
    """

    class Meta:
        model = SessionMemory

    class Params:
        expired = Trait(expires_at=LazyFunction(lambda: timezone.now() - timedelta(minutes=1)))

    tenant = SubFactory(TenantFactory)
    subject_id = DEFAULT_SUBJECT
    session_id = "session-1"
    role = SessionRole.USER
    content = Sequence(lambda n: f"Turn number {n}.")
    expires_at = LazyFunction(lambda: timezone.now() + timedelta(hours=1))
    occurred_at = LazyFunction(timezone.now)


class PromotionJobFactory(DjangoModelFactory[PromotionJob]):
    """A queued sweep-triggered promotion job, each for a session of its own (at most one job
    per session may be in flight). A job given a finished ``status`` gets ``finished_at``."""

    class Meta:
        model = PromotionJob

    tenant = SubFactory(TenantFactory)
    subject_id = DEFAULT_SUBJECT
    session_id = Sequence(lambda n: f"session-{n}")
    trigger = PromotionTrigger.SWEEP
    status = PromotionJobStatus.QUEUED
    enqueued_at = LazyFunction(timezone.now)
    finished_at = LazyAttribute(
        lambda o: None if o.status in PROMOTION_IN_FLIGHT_STATUSES else timezone.now()
    )
