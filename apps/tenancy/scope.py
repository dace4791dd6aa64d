"""Who is calling, resolved once per request from the API key (never from the request body)."""

from __future__ import annotations

from dataclasses import dataclass

from apps.tenancy.exceptions import SubjectUnresolvable
from apps.tenancy.models import ApiKey, ApiKeyRole, Tenant

#: Subjects under this prefix are reserved for Engram itself (e.g. the promotion eval). No API
#: key can act as one: ``api_key_create`` refuses such an ``agent_id``.
RESERVED_SUBJECT_PREFIX = "engram:"


def subject_id_for(api_key: ApiKey | None) -> str:
    """The memory subject a key acts as (spec: "subject_id derivation").

    An agent key with a non-blank ``agent_id`` acts as that agent, so every key an agent
    rotates through shares one memory scope; any other key acts as itself.
    """
    if api_key is None:
        raise SubjectUnresolvable("The API key has no resolvable subject.")
    if api_key.role == ApiKeyRole.AGENT and api_key.agent_id.strip():
        return api_key.agent_id.strip()
    if api_key.id is None:
        raise SubjectUnresolvable("The API key has no resolvable subject.")
    return str(api_key.id)


@dataclass(frozen=True)
class RequestScope:
    tenant: Tenant
    api_key: ApiKey
    subject_id: str
    impersonating: bool = False

    @property
    def role(self) -> str:
        return self.api_key.role

    @property
    def is_superadmin(self) -> bool:
        return self.api_key.role == ApiKeyRole.SUPERADMIN

    @property
    def is_agent(self) -> bool:
        return self.api_key.role == ApiKeyRole.AGENT

    @property
    def agent_id(self) -> str:
        return self.api_key.agent_id.strip()
