from __future__ import annotations

import hashlib
import hmac
import threading
import time
import uuid
from typing import TYPE_CHECKING

from cachetools import TTLCache
from django.conf import settings
from django.db.models import QuerySet

from apps.tenancy.encryption import decrypt_secret
from apps.tenancy.exceptions import TenantNotFound
from apps.tenancy.key_revocations import NOT_READ, Generation, api_keys_generation
from apps.tenancy.models import ApiKey, Tenant

if TYPE_CHECKING:
    from apps.providers.embeddings import EmbeddingConfig
    from apps.providers.llm import LLMConfig

KEY_PREFIX = "eng"
# Hot keys authenticate from memory: one lookup per key per API_KEY_CACHE_SECONDS per process
# instead of one query per request. A revocation or a tenant's halt empties it at once in the
# process that made it and in every process that sees its announcement (key_revocations.py);
# the TTL bounds the rest. docs/operators.md, "Revocation".
_AUTHENTICATED_KEYS_MAX = 10_000
_authenticated_keys: TTLCache[str, ApiKey] | None = None
_authenticated_keys_generation: Generation | None = None
_authenticated_keys_lock = threading.Lock()


def _clock() -> float:
    return time.monotonic()


def hash_secret(raw_key: str) -> str:
    # Keys are 256-bit random strings, so a fast hash is enough; a slow KDF buys nothing here.
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def parse_key_prefix(raw_key: str) -> str | None:
    parts = raw_key.split("_")
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1]


def _key_cache() -> TTLCache[str, ApiKey] | None:
    global _authenticated_keys
    seconds = settings.API_KEY_CACHE_SECONDS
    if seconds <= 0:
        return None
    if _authenticated_keys is None or _authenticated_keys.ttl != seconds:
        _authenticated_keys = TTLCache(
            maxsize=_AUTHENTICATED_KEYS_MAX, ttl=seconds, timer=lambda: _clock()
        )
    return _authenticated_keys


def api_key_authenticate(*, raw_key: str, changes_token: object = NOT_READ) -> ApiKey | None:
    """The active key whose secret is ``raw_key``, or None. ``changes_token``: the key-change
    announcement's token in the shared cache, when the caller read it already.

    Only successful lookups are remembered (keyed by the secret's hash, so a wrong secret for
    a known prefix never hits the cache), for at most ``API_KEY_CACHE_SECONDS``, and forgotten
    as soon as a change of keys or tenants is announced (apps/tenancy/key_revocations.py).
    """
    global _authenticated_keys_generation
    prefix = parse_key_prefix(raw_key)
    if prefix is None:
        return None
    digest = hash_secret(raw_key)
    generation = api_keys_generation(token=changes_token)
    with _authenticated_keys_lock:
        cache = _key_cache()
        if cache is not None and generation != _authenticated_keys_generation:
            # Keys or tenants changed somewhere since this memory was filled.
            cache.clear()
            _authenticated_keys_generation = generation
        cached = cache.get(digest) if cache is not None else None
    if cached is not None:
        return cached
    key = ApiKey.objects.select_related("tenant").filter(prefix=prefix).first()
    if key is None or not key.is_active:
        return None
    if not hmac.compare_digest(key.secret_hash, digest):
        return None
    with _authenticated_keys_lock:
        cache = _key_cache()
        if cache is not None:
            cache[digest] = key
    return key


def api_key_forget_cached(*, secret_hash: str) -> None:
    """Drop one key from this process's authentication cache (a revocation made here)."""
    with _authenticated_keys_lock:
        if _authenticated_keys is not None:
            _authenticated_keys.pop(secret_hash, None)


def api_key_cache_clear() -> None:
    with _authenticated_keys_lock:
        if _authenticated_keys is not None:
            _authenticated_keys.clear()


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
        owner=str(tenant.pk),
    )


def tenant_embedding_fingerprint(*, tenant: Tenant) -> str:
    """The fingerprint of the model the tenant's rows are embedded with now
    (``EmbeddingConfig.fingerprint``); cheap enough for every recall: no key is decrypted."""
    from apps.providers.embeddings import EmbeddingConfig

    if not tenant.embedding_provider:
        return EmbeddingConfig.default().fingerprint
    try:
        config = EmbeddingConfig.from_parts(
            provider=tenant.embedding_provider, config=tenant.embedding_config
        )
    except ValueError:
        # A stored config the provider layer refuses embeds nothing; its (nonexistent)
        # space still needs a name, one no vector has.
        return EmbeddingConfig(provider=tenant.embedding_provider).fingerprint
    return config.fingerprint


def tenant_llm_config(*, tenant: Tenant) -> LLMConfig:
    """The LLM provider this tenant's sessions are compiled with (its own, else the default)."""
    from apps.providers.llm import LLMConfig

    if not tenant.llm_provider:
        return LLMConfig.default()
    return LLMConfig.from_parts(
        provider=tenant.llm_provider,
        config=tenant.llm_config,
        api_key=decrypt_secret(tenant.llm_api_key_encrypted),
        owner=str(tenant.pk),
    )
