"""The shared base for every tenant-scoped API (STYLE rule 4).

It lives in ``tenancy`` rather than ``core`` because resolving a tenant needs the tenancy
models, and ``core`` knows no feature app (DESIGN §1).

Per request it resolves, exactly once, the :class:`RequestScope`: the tenant (the key's own, or
for a superadmin the one named by ``X-Impersonate-Tenant``), the key, and the subject derived
from the key. It also applies the role allow-list and the custody halt. Subclasses cannot
override that resolution; ``__init_subclass__`` refuses them at import time.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.views import APIView
from typing_extensions import override

from apps.core.exceptions import PermissionDenied
from apps.tenancy.exceptions import ImpersonationTenantRequired, TenantHalted
from apps.tenancy.models import ApiKey, ApiKeyRole
from apps.tenancy.scope import RequestScope, subject_id_for
from apps.tenancy.selectors import tenant_get_by_slug_or_id

IMPERSONATION_HEADER = "HTTP_X_IMPERSONATE_TENANT"
ALL_ROLES = frozenset(ApiKeyRole.values)
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class TenantApi(APIView):
    #: Roles that may call this API at all; others get 403 permission_denied.
    allowed_roles: ClassVar[frozenset[str]] = ALL_ROLES
    #: Methods that write on behalf of an agent and are therefore frozen by a custody halt.
    #: Read-only POSTs (recall, search) set this to an empty set.
    halted_methods: ClassVar[frozenset[str]] = WRITE_METHODS

    _sealed = ("initial", "resolve_scope")
    scope: RequestScope

    @override
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls._sealed:
            if name in cls.__dict__:
                raise TypeError(f"{cls.__name__} may not override TenantApi.{name}")

    @override
    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.scope = self.resolve_scope(request)

    def resolve_scope(self, request: Request) -> RequestScope:
        api_key = request.auth
        assert isinstance(api_key, ApiKey)  # noqa: S101 - IsAuthenticated ran first
        if api_key.role not in self.allowed_roles:
            raise PermissionDenied("This API key's role may not call this endpoint.")
        if api_key.role == ApiKeyRole.SUPERADMIN:
            identifier = request.META.get(IMPERSONATION_HEADER, "").strip()
            if not identifier:
                raise ImpersonationTenantRequired(
                    "A superadmin key must name a tenant in the X-Impersonate-Tenant header."
                )
            tenant = tenant_get_by_slug_or_id(identifier=identifier)
            return RequestScope(
                tenant=tenant,
                api_key=api_key,
                subject_id=subject_id_for(api_key),
                impersonating=True,
            )
        own_tenant = api_key.tenant
        assert own_tenant is not None  # noqa: S101 - guaranteed by api_key_tenant_matches_role
        if (
            api_key.role == ApiKeyRole.AGENT
            and own_tenant.is_halted
            and request.method in self.halted_methods
        ):
            raise TenantHalted(
                "This tenant is under a custody halt; agent writes are refused.",
                details={
                    "halted_at": own_tenant.halted_at.isoformat() if own_tenant.halted_at else None
                },
            )
        return RequestScope(tenant=own_tenant, api_key=api_key, subject_id=subject_id_for(api_key))
