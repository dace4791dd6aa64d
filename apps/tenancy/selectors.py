from __future__ import annotations

import hashlib
import hmac
import uuid

from django.db.models import QuerySet

from apps.tenancy.exceptions import TenantNotFound
from apps.tenancy.models import ApiKey, Tenant

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
