from __future__ import annotations

import secrets
from typing import Any

from factory.declarations import (
    LazyAttribute,
    LazyAttributeSequence,
    LazyFunction,
    Sequence,
    SubFactory,
    Trait,
)
from factory.django import DjangoModelFactory
from factory.faker import Faker

from apps.tenancy.models import ApiKey, ApiKeyRole, Tenant
from apps.tenancy.selectors import KEY_PREFIX, hash_secret
from apps.tenancy.services import IssuedApiKey


class TenantFactory(DjangoModelFactory[Tenant]):
    class Meta:
        model = Tenant

    slug = Sequence(lambda n: f"tenant-{n}")
    name = Faker("company")


def _secret() -> str:
    # The service's alphabet: no "_", which separates the key's three parts.
    return secrets.token_urlsafe(32).replace("_", "-")


def _prefix() -> str:
    return secrets.token_hex(6)


class ApiKeyFactory(DjangoModelFactory[ApiKey]):
    """An API key row stored as ``api_key_create`` stores it (public prefix, SHA-256 of the
    raw key). Only the hash is a column, so ``create`` cannot hand the raw key back; use
    ``ApiKeyFactory.issue(...)`` for a key to send, which returns the service's
    ``IssuedApiKey``. An agent key gets a distinct ``agent_id`` unless given one;
    ``superadmin=True`` gives the tenant-less superadmin key."""

    class Meta:
        model = ApiKey

    class Params:
        # Never stored: the parameter ``secret_hash`` is computed from.
        raw_key = LazyAttribute(lambda o: f"{KEY_PREFIX}_{o.prefix}_{_secret()}")
        superadmin = Trait(role=ApiKeyRole.SUPERADMIN, tenant=None)

    tenant = SubFactory(TenantFactory)
    role = ApiKeyRole.AGENT
    # Only agent keys carry an agent_id (the service refuses one on any other role).
    agent_id = LazyAttributeSequence(
        lambda o, n: f"agent-{n}" if o.role == ApiKeyRole.AGENT else ""
    )
    prefix = LazyFunction(_prefix)
    secret_hash = LazyAttribute(lambda o: hash_secret(o.raw_key))

    @classmethod
    def issue(cls, **kwargs: Any) -> IssuedApiKey:
        """Create a key and return it with its raw secret, as the service does."""
        prefix = kwargs.pop("prefix", None) or _prefix()
        raw_key = f"{KEY_PREFIX}_{prefix}_{_secret()}"
        api_key = cls.create(prefix=prefix, raw_key=raw_key, **kwargs)
        return IssuedApiKey(api_key=api_key, raw_key=raw_key)
