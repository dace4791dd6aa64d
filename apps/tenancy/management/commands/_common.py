from __future__ import annotations

from typing import Any

from apps.tenancy.models import ApiKey, Tenant
from apps.tenancy.selectors import tenant_get_by_slug_or_id


def tenant_arg(identifier: str) -> Tenant:
    return tenant_get_by_slug_or_id(identifier=identifier)


def api_key_summary(api_key: ApiKey) -> dict[str, Any]:
    return {
        "id": str(api_key.id),
        "prefix": api_key.prefix,
        "tenant": api_key.tenant.slug if api_key.tenant else None,
        "role": api_key.role,
        "agent_id": api_key.agent_id,
        "name": api_key.name,
        "created_at": api_key.created_at.isoformat() if api_key.created_at else None,
        "last_used_at": api_key.last_used_at.isoformat() if api_key.last_used_at else None,
        "revoked_at": api_key.revoked_at.isoformat() if api_key.revoked_at else None,
    }
