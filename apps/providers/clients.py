"""HTTP clients for the OpenAI-compatible and Anthropic endpoints, built once per endpoint+key.

A client owns a connection pool and a TLS context (tens of ms to build), so rebuilding one per
call would add that to every synchronous embed. The SDKs are imported on first use: together
they take about two seconds to import, which deployments on the local model never need.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from django.conf import settings

from apps.providers.exceptions import ProviderRejected

if TYPE_CHECKING:
    import anthropic
    import openai

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
# Supports the ``dimensions`` parameter, so it serves any EMBEDDING_DIMENSIONS up to 1536.
OPENAI_DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
# Keyless local servers (Ollama, llama.cpp, vLLM) ignore the header, but the SDK insists on
# a key, and leaving it unset would make it fall back to OPENAI_API_KEY from the environment:
# a tenant without a key must never borrow the operator's.
_PLACEHOLDER_API_KEY = "sk-no-key-required"


def openai_client(*, base_url: str, api_key: str) -> openai.OpenAI:
    return _openai_client(
        base_url or OPENAI_DEFAULT_BASE_URL,
        api_key or _PLACEHOLDER_API_KEY,
        settings.PROVIDER_HTTP_TIMEOUT_SECONDS,
    )


def anthropic_client(*, base_url: str, api_key: str) -> anthropic.Anthropic:
    return _anthropic_client(
        base_url or ANTHROPIC_DEFAULT_BASE_URL,
        api_key or _PLACEHOLDER_API_KEY,
        settings.PROVIDER_HTTP_TIMEOUT_SECONDS,
    )


def rejection_for(*, status_code: int, error: Exception) -> ProviderRejected | None:
    """A 4xx answer becomes ``ProviderRejected``; anything else stays an outage.

    408 is the server giving up on us mid-request, which says more about the endpoint than
    about the request, so it counts as an outage.
    """
    if 400 <= status_code < 500 and status_code != 408:
        return ProviderRejected(status_code=status_code, error_type=type(error).__name__)
    return None


# max_retries=0: the circuit breaker and the callers' own retry policies (Celery backoff)
# decide about retries; SDK-level retries would multiply the HTTP timeout behind our back.
@functools.lru_cache(maxsize=64)
def _openai_client(base_url: str, api_key: str, timeout: float) -> openai.OpenAI:
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


@functools.lru_cache(maxsize=64)
def _anthropic_client(base_url: str, api_key: str, timeout: float) -> anthropic.Anthropic:
    import anthropic

    return anthropic.Anthropic(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
