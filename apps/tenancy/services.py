from __future__ import annotations

import secrets
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from apps.core.db.erasure import erase_rows
from apps.core.db.transactions import write_transaction
from apps.core.exceptions import ValidationFailed
from apps.tenancy.encryption import encrypt_secret, reencrypt_secret
from apps.tenancy.exceptions import InvalidProviderConfig, TenantExists
from apps.tenancy.key_revocations import api_keys_changed
from apps.tenancy.models import ApiKey, ApiKeyRole, IdempotencyRecord, Tenant
from apps.tenancy.scope import RESERVED_SUBJECT_PREFIX
from apps.tenancy.selectors import (
    KEY_PREFIX,
    api_key_cache_clear,
    api_key_forget_cached,
    hash_secret,
)

LAST_USED_RESOLUTION = timedelta(minutes=1)


def tenant_create(*, slug: str, name: str) -> Tenant:
    tenant = Tenant(slug=slug.strip(), name=name.strip() or slug.strip())
    tenant.full_clean(validate_unique=False)
    try:
        with write_transaction():
            tenant.save()
    except IntegrityError as exc:
        raise TenantExists(f"A tenant with slug {slug!r} already exists.") from exc
    return tenant


@dataclass(frozen=True)
class IssuedApiKey:
    api_key: ApiKey
    raw_key: str  # shown once, never stored


def api_key_create(
    *, tenant: Tenant | None, role: str, agent_id: str = "", name: str = ""
) -> IssuedApiKey:
    if role not in ApiKeyRole.values:
        raise ValidationFailed(f"Unknown role {role!r}.", code="invalid_role")
    if role == ApiKeyRole.SUPERADMIN and tenant is not None:
        raise ValidationFailed("A superadmin key belongs to no tenant.", code="invalid_role")
    if role != ApiKeyRole.SUPERADMIN and tenant is None:
        raise ValidationFailed("This role needs a tenant.", code="tenant_required")
    if agent_id and role != ApiKeyRole.AGENT:
        raise ValidationFailed("Only agent keys carry an agent_id.", code="invalid_agent_id")
    if agent_id.strip().startswith(RESERVED_SUBJECT_PREFIX):
        raise ValidationFailed(
            f"agent_id may not start with {RESERVED_SUBJECT_PREFIX!r} (reserved).",
            code="invalid_agent_id",
        )
    prefix = secrets.token_hex(6)
    raw_key = f"{KEY_PREFIX}_{prefix}_{secrets.token_urlsafe(32).replace('_', '-')}"
    api_key = ApiKey(
        tenant=tenant,
        role=role,
        agent_id=agent_id.strip(),
        name=name,
        prefix=prefix,
        secret_hash=hash_secret(raw_key),
    )
    api_key.full_clean()
    api_key.save()
    return IssuedApiKey(api_key=api_key, raw_key=raw_key)


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at", "updated_at"])
    api_key_forget_cached(secret_hash=api_key.secret_hash)
    api_keys_changed()  # every other process that sees it forgets its cached keys too
    return api_key


def api_key_touch(*, api_key: ApiKey) -> None:
    """Record use, at most once a minute per key so authentication stays read-mostly."""
    now = timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


def tenant_halt(*, tenant: Tenant, reason: str = "") -> Tenant:
    tenant.halted_at = timezone.now()
    tenant.halt_reason = reason
    tenant.save(update_fields=["halted_at", "halt_reason", "updated_at"])
    api_key_cache_clear()  # cached keys carry their tenant; this process sees the change now
    api_keys_changed()  # and so does every process that sees the announcement
    return tenant


def tenant_hold_unhalted(*, tenant: Tenant) -> bool:
    """Inside a transaction, just before a background job writes a tenant's data: hold the
    tenant's row so a concurrent halt waits for this commit, and say whether writing is
    allowed (False when the tenant is halted, or gone)."""
    halted = (
        Tenant.objects.select_for_update(no_key=True)
        .filter(pk=tenant.pk)
        .values_list("halted_at", flat=True)
    )
    rows = list(halted)
    return bool(rows) and rows[0] is None


def tenant_resume(*, tenant: Tenant) -> Tenant:
    tenant.halted_at = None
    tenant.halt_reason = ""
    tenant.save(update_fields=["halted_at", "halt_reason", "updated_at"])
    api_key_cache_clear()  # cached keys carry their tenant; this process sees the change now
    api_keys_changed()  # and so does every process that sees the announcement
    return tenant


def tenant_configure_embedding_provider(
    *, tenant: Tenant, provider: str, config: dict[str, Any], api_key: str = ""
) -> Tenant:
    """Point a tenant at an embedding provider, refusing one whose vectors would not fit.

    The provider is probed once with a short text, so a wrong dimension, a bad key or an
    unreachable endpoint is reported now (422) rather than at the first write.
    """
    from apps.providers.embeddings import (
        EmbeddingConfig,
        EmbeddingsUnavailable,
        probe_embedding_provider,
    )

    try:
        candidate = EmbeddingConfig.from_parts(
            provider=provider, config=config, api_key=api_key, owner=str(tenant.pk)
        )
    except ValueError as exc:
        raise InvalidProviderConfig(str(exc)) from exc
    try:
        probe_embedding_provider(candidate)
    except EmbeddingsUnavailable as exc:
        raise InvalidProviderConfig(str(exc), details={"reason": exc.reason}) from exc
    tenant.embedding_provider = provider
    tenant.embedding_config = {k: v for k, v in config.items() if k != "api_key"}
    tenant.embedding_api_key_encrypted = encrypt_secret(api_key)
    tenant.save(
        update_fields=[
            "embedding_provider",
            "embedding_config",
            "embedding_api_key_encrypted",
            "updated_at",
        ]
    )
    api_key_cache_clear()
    return tenant


def tenant_configure_llm_provider(
    *, tenant: Tenant, provider: str, config: dict[str, Any], api_key: str = ""
) -> Tenant:
    from apps.providers.llm import LLM_PROVIDERS, LLMConfig

    if provider not in LLM_PROVIDERS:
        raise InvalidProviderConfig(
            f"Unknown LLM provider {provider!r}; choose one of {sorted(LLM_PROVIDERS)}."
        )
    if provider != "heuristic" and not api_key and not config.get("base_url"):
        raise InvalidProviderConfig(f"The {provider} provider needs an api_key or a base_url.")
    try:
        LLMConfig.from_parts(provider=provider, config=config, api_key=api_key)
    except ValueError as exc:
        raise InvalidProviderConfig(str(exc)) from exc
    tenant.llm_provider = provider
    tenant.llm_config = {k: v for k, v in config.items() if k != "api_key"}
    tenant.llm_api_key_encrypted = encrypt_secret(api_key)
    tenant.save(update_fields=["llm_provider", "llm_config", "llm_api_key_encrypted", "updated_at"])
    api_key_cache_clear()
    return tenant


#: The tenant columns that hold an encrypted provider secret.
ENCRYPTED_SECRET_FIELDS = ("embedding_api_key_encrypted", "llm_api_key_encrypted")


def provider_secrets_rotate() -> int:
    """Re-encrypt under ``ENGRAM_ENCRYPTION_KEY`` every stored provider secret that only one
    of ``ENGRAM_ENCRYPTION_KEY_FALLBACKS`` reads; returns how many were. Safe to run on every
    start: a secret already under the current key (or unreadable by every key) is left as it
    is, and each write is conditional on the value read, so a concurrent reconfiguration wins.
    """
    rotated = 0
    tenants = Tenant.objects.exclude(embedding_api_key_encrypted="", llm_api_key_encrypted="")
    for tenant in tenants.only("pk", *ENCRYPTED_SECRET_FIELDS):
        for name in ENCRYPTED_SECRET_FIELDS:
            stored: str = getattr(tenant, name)
            fresh = reencrypt_secret(stored)
            if fresh is not None:
                rotated += Tenant.objects.filter(pk=tenant.pk, **{name: stored}).update(
                    **{name: fresh, "updated_at": timezone.now()}
                )
    if rotated:
        api_key_cache_clear()
    return rotated


def idempotency_erase(*, tenant: Tenant, subject_id: str | None, dry_run: bool) -> int:
    """Delete (or count) the stored first responses of one subject, or of the whole tenant
    (``subject_id=None``): they can hold the content of a write. Helper for erasure, inside
    its transaction."""
    records = IdempotencyRecord.objects.filter(tenant=tenant)
    if subject_id is not None:
        records = records.filter(subject_id=subject_id)
    return erase_rows(records, dry_run=dry_run)


def idempotency_forget_responses(
    *, tenant: Tenant, subject_id: str, resource_ids: Collection[uuid.UUID]
) -> int:
    """Delete the subject's stored responses that name any of ``resource_ids`` (a forgotten
    memory, an article deleted with it), so a retried write cannot replay forgotten text.
    Returns how many. Helper for forget, inside its transaction.

    A record is matched by the id's text anywhere in its body: ids are UUIDs, so a match is
    that resource, whatever the response's shape. Only completed records hold a body. The
    key is then free again: a retry runs the write afresh, as a new request would.
    """
    if not resource_ids:
        return 0
    names = Q()
    for resource_id in resource_ids:
        names |= Q(body_text__contains=str(resource_id))
    deleted, _ = (
        IdempotencyRecord.objects.for_tenant(tenant)
        .filter(subject_id=subject_id, status_code__isnull=False)
        .annotate(body_text=Cast("response_body", output_field=TextField()))
        .filter(names)
        .delete()
    )
    return deleted
