"""Typed "unavailable" results of the provider layer.

These are not ``ApplicationError``s: a provider outage is not the client's fault, and each
caller degrades in its own way (ILIKE fallback, 503 ``gate_unavailable``, snooze — DESIGN §3).
Callers catch them and decide; the ``reason`` tells them why without parsing messages.
"""

from __future__ import annotations

from enum import StrEnum

from typing_extensions import override


class ProvidersErrorCode(StrEnum):
    CIRCUIT_OPEN = "circuit_open"
    PROVIDER_ERROR = "provider_error"
    MISSING_API_KEY = "missing_api_key"
    DIMENSION_MISMATCH = "dimension_mismatch"
    UNKNOWN_PROVIDER = "unknown_provider"


class ProviderUnavailable(Exception):
    """Base of the two public results; ``reason`` compares equal to its plain string."""

    def __init__(self, reason: str, message: str = "") -> None:
        # A reason outside the vocabulary is a programming error, so it fails loudly here.
        self.reason = ProvidersErrorCode(reason)
        self.message = message or f"Provider unavailable ({self.reason})."
        super().__init__(self.message)

    @override
    def __repr__(self) -> str:
        return f"{type(self).__name__}(reason={str(self.reason)!r}, message={self.message!r})"


class EmbeddingsUnavailable(ProviderUnavailable):
    """No vectors this time; see ``reason``."""


class LLMUnavailable(ProviderUnavailable):
    """No completion this time; see ``reason``. ``dimension_mismatch`` never occurs here."""


class ProviderRejected(Exception):
    """The endpoint answered, but refused this request (a 4xx: bad key, unknown model, quota).

    The circuit breaker treats it as proof the endpoint is up: a breaker is shared by every
    tenant using that endpoint, so one tenant's revoked key must not cut off the others.
    """

    def __init__(self, *, status_code: int, error_type: str) -> None:
        self.status_code = status_code
        self.error_type = error_type
        super().__init__(f"{error_type} (HTTP {status_code})")
