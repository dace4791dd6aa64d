"""Which provider errors are the provider's fault, for the circuit breakers (DESIGN §10).

A breaker must open on a failing endpoint, and on nothing else: a caller's text that no
encoder accepts, or an SDK refusing an argument, says nothing about the endpoint, and
counting it would let any caller open a breaker other tenants share.
"""

from __future__ import annotations

import hashlib
import sys

from apps.providers.breaker import Verdict
from apps.providers.exceptions import ProviderRejected

#: 408 (request timeout) and 429 (rate limited) are the endpoint's state, not the request's.
FAULT_STATUSES = frozenset({408, 429})


def classify_provider_error(exc: BaseException) -> Verdict:
    """``fault`` for timeouts, transport errors, 5xx and rate limits; ``answered`` for any
    other refusal the endpoint sent; ``neutral`` for everything else."""
    if isinstance(exc, ProviderRejected):
        return "fault" if exc.status_code in FAULT_STATUSES else "answered"
    if isinstance(exc, OSError):  # ConnectionError, TimeoutError, socket errors
        return "fault"
    # The SDKs are imported lazily (apps/providers/clients.py); an SDK that is not loaded
    # cannot have raised.
    for name in ("openai", "anthropic"):
        sdk = sys.modules.get(name)
        if sdk is None:
            continue
        if isinstance(exc, sdk.APIConnectionError):  # includes APITimeoutError
            return "fault"
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            return "fault" if status >= 500 or status in FAULT_STATUSES else "answered"
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return "fault"
    return "neutral"


def provider_config_breaker_key(endpoint: str, *parts: str) -> str:
    """``endpoint`` plus a digest of the rest of a provider configuration (key included)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{endpoint}|{digest}"
