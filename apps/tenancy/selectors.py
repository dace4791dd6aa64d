from __future__ import annotations

import hashlib
import hmac
import uuid
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from apps.tenancy.encryption import decrypt_secret
from apps.tenancy.exceptions import TenantNotFound
from apps.tenancy.models import ApiKey, Tenant

if TYPE_CHECKING:
    from apps.providers.embeddings import EmbeddingConfig
    from apps.providers.llm import LLMConfig

KEY_PREFIX = "eng"


def hash_secret(raw_key: str) -> str:
    # Keys are 256-bit random strings, so a fast hash is enough; a slow KDF buys nothing here.
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def parse_key_prefix(raw_key: str) -> str | None:
    parts = raw_key.split("_")
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1]


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key whose secret is ``raw_key``, or None."""
    prefix = parse_key_prefix(raw_key)
    if prefix is None:
        return None
    key = ApiKey.objects.select_related("tenant").filter(prefix=prefix).first()
    if key is None or not key.is_active:
        return None
    if not hmac.compare_digest(key.secret_hash, hash_secret(raw_key)):
        return None
    return key


def tenant_get_by_slug_or_id(*, identifier: str) -> Tenant:
    identifier = identifier.strip()
    tenant: Tenant | None = None
    try:
        tenant = Tenant.objects.filter(id=uuid.UUID(identifier)).first()
    except ValueError:
        tenant = None
    if tenant is None:
        tenant = Tenant.objects.filter(slug=identifier).first()
    if tenant is None:
        raise TenantNotFound("Tenant not found.")
    return tenant


def tenant_list() -> QuerySet[Tenant]:
    return Tenant.objects.all()


def api_key_list(*, tenant: Tenant | None, include_revoked: bool = False) -> QuerySet[ApiKey]:
    keys = ApiKey.objects.select_related("tenant")
    keys = keys.filter(tenant=tenant) if tenant is not None else keys.filter(tenant__isnull=True)
    if not include_revoked:
        keys = keys.filter(revoked_at__isnull=True)
    return keys.order_by("created_at")


def api_key_get(*, identifier: str) -> ApiKey | None:
    """A key by its public prefix or its id (operators know one or the other)."""
    identifier = identifier.strip()
    key = ApiKey.objects.select_related("tenant").filter(prefix=identifier).first()
    if key is None:
        try:
            key = ApiKey.objects.select_related("tenant").filter(id=uuid.UUID(identifier)).first()
        except ValueError:
            key = None
    return key


def tenant_embedding_config(*, tenant: Tenant) -> EmbeddingConfig:
    """The embedding provider this tenant's rows are embedded with (its own, else the default)."""
    from apps.providers.embeddings import EmbeddingConfig

    if not tenant.embedding_provider:
        return EmbeddingConfig.default()
    return EmbeddingConfig.from_parts(
        provider=tenant.embedding_provider,
        config=tenant.embedding_config,
        api_key=decrypt_secret(tenant.embedding_api_key_encrypted),
    )


def tenant_llm_config(*, tenant: Tenant) -> LLMConfig:
    """The LLM provider this tenant's sessions are compiled with (its own, else the default)."""
    from apps.providers.llm import LLMConfig

    if not tenant.llm_provider:
        return LLMConfig.default()
    return LLMConfig.from_parts(
        provider=tenant.llm_provider,
        config=tenant.llm_config,
        api_key=decrypt_secret(tenant.llm_api_key_encrypted),
    )
