"""The shared base for every tenant-scoped API (STYLE rule 4).

It lives in ``tenancy`` rather than ``core`` because resolving a tenant needs the tenancy
models, and ``core`` knows no feature app (DESIGN §1).

Per request it resolves, exactly once, the :class:`RequestScope`: the tenant (the key's own, or
for a superadmin the one named by ``X-Impersonate-Tenant``), the key, and the subject derived
from the key. It also applies the role allow-list and the custody halt, then charges the
method's rate-limit bucket. Subclasses cannot override that resolution; ``__init_subclass__``
refuses them at import time.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any, ClassVar, TypeVar, cast

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from typing_extensions import override

from apps.core.db.transactions import unit_of_work
from apps.core.exceptions import PermissionDenied
from apps.core.in_flight import subject_in_flight_slot
from apps.core.rate_limits import RateBucket, RateCharge, enforce_rate_limit
from apps.tenancy.exceptions import (
    ImpersonationTenantRequired,
    InvalidIdempotencyKey,
    TenantHalted,
)
from apps.tenancy.idempotency import (
    IdempotencyReplay,
    idempotency_claim,
    idempotency_complete,
    idempotency_release,
)
from apps.tenancy.models import IDEMPOTENCY_KEY_MAX_LENGTH, ApiKey, ApiKeyRole
from apps.tenancy.scope import RequestScope, subject_id_for
from apps.tenancy.selectors import tenant_get_by_slug_or_id

IMPERSONATION_HEADER = "HTTP_X_IMPERSONATE_TENANT"
ALL_ROLES = frozenset(ApiKeyRole.values)
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# The rate-limit buckets, each per (tenant, subject) per fixed window (docs/operators.md,
# "Request bounds"). Every method that writes, embeds or ranks is charged to one.
#: Reads by meaning (memory recall, merged recall, knowledge search and context) and the article
#: opens they lead to: each ranks or records what it surfaced.
RECALL = RateBucket("recall", "RECALL_RATE_LIMIT", "RECALL_RATE_WINDOW_SECONDS")
#: Memory items written (long-term rows and session turns; a batch counts each item).
MEMORY_WRITE = RateBucket(
    "memory-write", "MEMORY_WRITE_RATE_LIMIT", "MEMORY_WRITE_RATE_WINDOW_SECONDS"
)
#: Writes that embed a whole article: article create (an agent's runs the novelty gate in the
#: request) and update, and graduation (the gate again).
EMBEDDING_WRITE = RateBucket(
    "embedding-write", "EMBEDDING_WRITE_RATE_LIMIT", "EMBEDDING_WRITE_RATE_WINDOW_SECONDS"
)
#: Every other write: deletes, archives, publishes, project changes, promotion requests, erasure.
WRITE = RateBucket("write", "WRITE_RATE_LIMIT", "WRITE_RATE_WINDOW_SECONDS")
#: The methods a rate-limit exemption may name: a write is always charged.
EXEMPTIBLE_METHODS = frozenset({"GET"})


class TenantApi(APIView):
    #: Roles that may call this API; others get 403 permission_denied.
    allowed_roles: ClassVar[frozenset[str]] = ALL_ROLES
    #: A narrower role set for some methods of the view (e.g. its writes), where one URL mixes
    #: reads open to every role with writes that are not.
    allowed_roles_by_method: ClassVar[Mapping[str, frozenset[str]]] = {}
    #: Methods that write on behalf of an agent and are therefore frozen by a custody halt.
    #: Read-only POSTs (recall, search) set this to an empty set.
    halted_methods: ClassVar[frozenset[str]] = WRITE_METHODS
    #: The bucket each HTTP method is charged to, once the caller is known (after the role
    #: check and the custody halt) and before the handler runs or the body is validated: past
    #: the bucket's limit the request is 429 `rate_limited` and does nothing. HEAD is charged
    #: as GET. Writes default to :data:`WRITE`; a view that declares its own map names every
    #: method it charges.
    rate_limits: ClassVar[Mapping[str, RateBucket]] = dict.fromkeys(sorted(WRITE_METHODS), WRITE)
    #: Methods charged to no bucket, each with the reason. Only a GET that neither embeds, ranks
    #: nor writes may be exempt (tests/core/test_rate_limits_all_endpoints.py proves both maps
    #: for every URL).
    rate_limit_exempt: ClassVar[Mapping[str, str]] = {}
    #: Whether :meth:`rate_cost` reads the request's body (a batch counts its items).
    rate_cost_reads_body: ClassVar[bool] = False

    _sealed = ("dispatch", "initial", "resolve_scope", "admit", "rate_charge")
    scope: RequestScope
    _in_flight: ExitStack | None = None

    @override
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls._sealed:
            if name in cls.__dict__:
                raise TypeError(f"{cls.__name__} may not override TenantApi.{name}")
        if not set(cls.rate_limit_exempt) <= EXEMPTIBLE_METHODS:
            raise TypeError(f"{cls.__name__}: only a GET may be exempt from rate limits")
        if charged_and_exempt := set(cls.rate_limits) & set(cls.rate_limit_exempt):
            raise TypeError(f"{cls.__name__}: {sorted(charged_and_exempt)} charged and exempt")

    @override
    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            if self._in_flight is not None:
                self._in_flight.close()

    @override
    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.scope = self.resolve_scope(request)
        self.admit(request)

    def admit(self, request: Request) -> None:
        """Take one of the caller's (tenant, subject) in-flight slots until the view returns,
        and charge the method's rate-limit bucket: in one round trip to the shared cache,
        unless the charge needs the body (:attr:`rate_cost_reads_body`).

        Past ``SUBJECT_MAX_IN_FLIGHT`` the request is 429 `too_many_requests_in_flight` and
        does nothing (nor counts in its bucket); past the bucket's limit it is 429
        `rate_limited` and does nothing. The bucket is keyed by subject, not key, so an agent
        rotating keys shares one bucket, shared across processes through the cache."""
        tenant_id, subject_id = self.scope.tenant.pk, self.scope.subject_id
        held = ExitStack()
        self._in_flight = held
        if not self.rate_cost_reads_body:
            held.enter_context(
                subject_in_flight_slot(
                    tenant_id=tenant_id, subject_id=subject_id, charge=self.rate_charge(request)
                )
            )
            return
        # The slot first, on its own: a request past the cap is refused before its body is read.
        held.enter_context(subject_in_flight_slot(tenant_id=tenant_id, subject_id=subject_id))
        if (charge := self.rate_charge(request)) is not None:
            enforce_rate_limit(charge)

    @classmethod
    def rate_bucket_for(cls, method: str) -> RateBucket | None:
        """The bucket ``method`` (upper case) is charged to, or None for an exempt method."""
        return cls.rate_limits.get("GET" if method == "HEAD" else method)

    def rate_cost(self, request: Request) -> int:
        """How many hits this request counts in its bucket (a batch overrides it)."""
        return 1

    def rate_charge(self, request: Request) -> RateCharge | None:
        """What this request costs the caller's (tenant, subject) bucket, if it is charged."""
        bucket = self.rate_bucket_for(request.method or "")
        if bucket is None:
            return None
        return RateCharge(
            bucket=f"{bucket.name}:{self.scope.tenant.pk}:{self.scope.subject_id}",
            limit=bucket.limit,
            window_seconds=bucket.window_seconds,
            cost=self.rate_cost(request),
            name=bucket.name,
        )

    @classmethod
    def roles_for(cls, method: str) -> frozenset[str]:
        """The roles that may call ``method`` (upper case) on this view."""
        return cls.allowed_roles_by_method.get(method, cls.allowed_roles)

    def resolve_scope(self, request: Request) -> RequestScope:
        api_key = request.auth
        assert isinstance(api_key, ApiKey)  # noqa: S101 - IsAuthenticated ran first
        if api_key.role not in self.roles_for(request.method or ""):
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


# ----------------------------------------------------------------------------- Idempotency-Key

IDEMPOTENCY_HEADER = "HTTP_IDEMPOTENCY_KEY"
REPLAYED_HEADER = "Idempotent-Replayed"
IDEMPOTENCY_KEY_PARAMETER = OpenApiParameter(
    name="Idempotency-Key",
    # What _idempotency_key() accepts: 1-255 visible ASCII characters.
    type={
        "type": "string",
        "pattern": f"^[\\x21-\\x7e]{{1,{IDEMPOTENCY_KEY_MAX_LENGTH}}}$",
        "minLength": 1,
        "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH,
    },
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "Makes the write retry-safe (1-255 visible ASCII characters, e.g. a UUID). Within "
        "24 h, the same key with the same method, path and body returns the first 2xx "
        "response again (with `Idempotent-Replayed: true`) and writes nothing; with another "
        "body it is 422 `idempotency_key_reused`; while the first request is still running, "
        "409 `idempotency_key_in_progress` with `Retry-After`. A request that failed does not "
        "keep the key. Keys are scoped to the caller's tenant and subject."
    ),
)

_Handler = TypeVar("_Handler", bound=Callable[..., Response])


class ReadByMeaningApi(TenantApi):
    """Memory recall, merged recall and knowledge search: reads that take their query as a
    POST body. A custody halt does not freeze them, and each call counts once in the shared
    :data:`RECALL` bucket (a merged recall too)."""

    halted_methods = frozenset()
    rate_limits = {"POST": RECALL}


def _idempotency_key(raw: str) -> str:
    key = raw.strip()
    if not 0 < len(key) <= IDEMPOTENCY_KEY_MAX_LENGTH or not all(
        "!" <= char <= "~" for char in key
    ):
        raise InvalidIdempotencyKey(
            f"Idempotency-Key must be 1-{IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters."
        )
    return key


def _fingerprint(request: Request) -> str:
    digest = hashlib.sha256()
    for part in (request.method or "", request.get_full_path()):
        digest.update(part.encode("utf-8") + b"\0")
    digest.update(request.body)
    return digest.hexdigest()


def _as_sent(response: Response) -> Any:
    """The body as the client receives it (DRF's encoder: UUIDs, datetimes, decimals)."""
    return None if response.data is None else json.loads(JSONRenderer().render(response.data))


def idempotent(handler: _Handler) -> _Handler:
    """Make a ``TenantApi`` write method honour the ``Idempotency-Key`` header.

    Without the header the method runs as before. With it, the first request claims the key
    for the caller's (tenant, subject), runs, and its 2xx response is kept for 24 h; a
    repeat gets that response back without running the method. Also documents the header
    on the operation.
    """

    @functools.wraps(handler)
    def wrapper(view: TenantApi, request: Request, *args: Any, **kwargs: Any) -> Response:
        raw_key = request.META.get(IDEMPOTENCY_HEADER)
        if raw_key is None:
            return handler(view, request, *args, **kwargs)
        key = _idempotency_key(raw_key)
        tenant = view.scope.tenant
        outcome = idempotency_claim(
            tenant=tenant,
            subject_id=view.scope.subject_id,
            key=key,
            fingerprint=_fingerprint(request),
        )
        if isinstance(outcome, IdempotencyReplay):
            return Response(
                outcome.body, status=outcome.status_code, headers={REPLAYED_HEADER: "true"}
            )
        committing = False
        try:
            # The write and its kept response commit together, so a retry either replays the
            # response or finds that nothing was written; never a write applied twice.
            with unit_of_work():
                response = handler(view, request, *args, **kwargs)
                if 200 <= response.status_code < 300:
                    idempotency_complete(
                        tenant=tenant,
                        claim=outcome,
                        status_code=response.status_code,
                        body=_as_sent(response),
                    )
                else:
                    idempotency_release(tenant=tenant, claim=outcome)
                committing = True
        except BaseException:
            if not committing:
                # Rolled back: nothing was written, so a retry must be free to run at once.
                idempotency_release(tenant=tenant, claim=outcome)
            # A COMMIT that failed may still have been applied: the claim stays in progress
            # until its lease runs out, and the retry then replays or runs.
            raise
        if 200 <= response.status_code < 300:
            response[REPLAYED_HEADER] = "false"
        return response

    wrapper.idempotent = True  # type: ignore[attr-defined] # read by the coverage test
    return cast("_Handler", extend_schema(parameters=[IDEMPOTENCY_KEY_PARAMETER])(wrapper))
