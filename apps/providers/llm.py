"""LLM completions for session promotion (DESIGN §5): JSON out, temperature 0, fail closed.

``complete_json`` returns the model's raw text; the caller parses it and treats anything
unparseable as "nothing extracted". The ``heuristic`` provider is not an HTTP model: the
promotion app implements that extractor itself, so asking this module for it is a bug.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.conf import settings

from apps.providers.breaker import CircuitBreaker, CircuitOpen
from apps.providers.clients import (
    ANTHROPIC_DEFAULT_BASE_URL,
    OPENAI_DEFAULT_BASE_URL,
    anthropic_client,
    openai_client,
    rejection_for,
)
from apps.providers.exceptions import LLMUnavailable, ProviderRejected, ProvidersErrorCode
from apps.providers.faults import classify_provider_error, provider_config_breaker_key

__all__ = ["LLM_PROVIDERS", "LLMConfig", "LLMUnavailable", "complete_json"]

logger = logging.getLogger("engram.providers")

LLM_PROVIDERS = frozenset({"heuristic", "openai", "anthropic"})
# Used when a config names no model. Both accept the JSON-schema output mode; the OpenAI one
# also still accepts temperature 0, which OpenAI's reasoning models refuse.
OPENAI_DEFAULT_MODEL = "gpt-4.1-mini"
ANTHROPIC_DEFAULT_MODEL = "claude-haiku-4-5"
DEFAULT_MAX_TOKENS = 2048


@dataclass(frozen=True)
class LLMConfig:
    provider: str
    model: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    max_tokens: int = DEFAULT_MAX_TOKENS
    #: A tenant's id for its own provider, blank for the deployment default (breaker key).
    owner: str = ""

    @classmethod
    def from_parts(
        cls, *, provider: str, config: Mapping[str, Any], api_key: str = "", owner: str = ""
    ) -> LLMConfig:
        """Build from a stored tenant config (keys ``model``, ``base_url``, ``max_tokens``).

        Raises ``ValueError`` when ``max_tokens`` is not a positive integer.
        """
        max_tokens = config.get("max_tokens") or DEFAULT_MAX_TOKENS
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise ValueError("max_tokens must be a positive integer")
        return cls(
            provider=provider.strip(),
            model=str(config.get("model") or "").strip(),
            base_url=str(config.get("base_url") or "").strip(),
            api_key=api_key,
            max_tokens=max_tokens,
            owner=owner,
        )

    @classmethod
    def default(cls) -> LLMConfig:
        """The deployment's provider, for tenants that configured none."""
        return cls(
            provider=settings.LLM_PROVIDER,
            model=settings.LLM_MODEL,
            base_url=settings.LLM_BASE_URL,
            api_key=settings.LLM_API_KEY,
        )

    @property
    def resolved_model(self) -> str:
        if self.model:
            return self.model
        if self.provider == "openai":
            return OPENAI_DEFAULT_MODEL
        if self.provider == "anthropic":
            return ANTHROPIC_DEFAULT_MODEL
        return ""

    @property
    def breaker_key(self) -> str:
        """One breaker per provider configuration: the endpoint, a digest of the key (never
        the key) and the owner."""
        return provider_config_breaker_key(self.endpoint_key, self.api_key, self.owner)

    @property
    def endpoint_key(self) -> str:
        """The endpoint: provider, URL and model, never the key."""
        defaults = {"openai": OPENAI_DEFAULT_BASE_URL, "anthropic": ANTHROPIC_DEFAULT_BASE_URL}
        base_url = (self.base_url or defaults.get(self.provider, "")).rstrip("/")
        return f"{self.provider}|{base_url}|{self.resolved_model}"


def complete_json(
    config: LLMConfig, *, system: str, user: str, json_schema: dict[str, Any], schema_name: str
) -> str:
    """The model's raw reply to ``system`` + ``user``, constrained to ``json_schema``.

    Raises ``LLMUnavailable`` on any provider failure (never another exception type), and
    ``ValueError`` for the ``heuristic`` provider, which has no HTTP model behind it.
    """
    if config.provider == "heuristic":
        raise ValueError("The heuristic LLM provider runs in the promotion app, not over HTTP.")
    completer = _COMPLETERS.get(config.provider)
    if completer is None:
        raise LLMUnavailable(
            ProvidersErrorCode.UNKNOWN_PROVIDER,
            f"Unknown LLM provider {config.provider!r}; choose one of {sorted(LLM_PROVIDERS)}.",
        )
    if not config.api_key and not config.base_url:
        raise LLMUnavailable(
            ProvidersErrorCode.MISSING_API_KEY,
            f"The {config.provider} LLM provider needs an api_key (or a base_url for a server "
            "that takes none).",
        )
    breaker = CircuitBreaker(f"llm:{config.breaker_key}", classify=classify_provider_error)
    try:
        text = breaker.call(
            functools.partial(
                completer,
                config,
                system=system,
                user=user,
                json_schema=json_schema,
                schema_name=schema_name,
            )
        )
    except CircuitOpen as exc:
        raise LLMUnavailable(
            ProvidersErrorCode.CIRCUIT_OPEN,
            f"The {config.provider} LLM provider is failing; calls are paused.",
        ) from exc
    except ProviderRejected as exc:
        raise LLMUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} LLM provider refused the request: {exc}.",
        ) from exc
    except Exception as exc:
        # Deliberately broad: callers get the one type they degrade on. The message names the
        # class only — SDK messages can echo request details.
        logger.warning("LLM provider %s failed: %s", config.endpoint_key, type(exc).__name__)
        raise LLMUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} LLM provider failed ({type(exc).__name__}).",
        ) from exc
    if text is None:
        # The endpoint answered (so the breaker saw a success) but with no text: a refusal.
        raise LLMUnavailable(
            ProvidersErrorCode.PROVIDER_ERROR,
            f"The {config.provider} LLM provider returned no text.",
        )
    return text


def _openai_complete(
    config: LLMConfig, *, system: str, user: str, json_schema: dict[str, Any], schema_name: str
) -> str | None:
    import openai

    client = openai_client(base_url=config.base_url, api_key=config.api_key)
    try:
        completion = client.chat.completions.create(
            model=config.resolved_model,
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            temperature=0,
            # max_completion_tokens, not the deprecated max_tokens that OpenAI's newer models
            # reject; compatible servers that don't know it ignore it.
            max_completion_tokens=config.max_tokens,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            },
        )
    except openai.APIStatusError as exc:
        rejection = rejection_for(status_code=exc.status_code, error=exc)
        if rejection is None:
            raise
        raise rejection from exc
    if not completion.choices:
        return None
    return completion.choices[0].message.content


def _anthropic_complete(
    config: LLMConfig, *, system: str, user: str, json_schema: dict[str, Any], schema_name: str
) -> str | None:
    import anthropic

    client = anthropic_client(base_url=config.base_url, api_key=config.api_key)
    schema_line = json.dumps(json_schema, sort_keys=True, separators=(",", ":"))
    try:
        message = client.messages.create(
            model=config.resolved_model,
            max_tokens=config.max_tokens,
            # The schema is enforced by output_config; the line repeats it for
            # Anthropic-compatible servers that ignore output_config.
            system=f"{system}\n\nRespond with only a JSON object ({schema_name}) matching this "
            f"JSON schema: {schema_line}",
            messages=[{"role": "user", "content": user}],
            output_config={"format": {"type": "json_schema", "schema": json_schema}},
            # NOTE: no temperature. The SDK (2.x) removed sampling parameters and the API
            # version it sends rejects them with a 400 on every model.
        )
    except anthropic.APIStatusError as exc:
        rejection = rejection_for(status_code=exc.status_code, error=exc)
        if rejection is None:
            raise
        raise rejection from exc
    texts = [block.text for block in message.content if block.type == "text"]
    return "".join(texts) if texts else None


class _Completer(Protocol):
    def __call__(
        self,
        config: LLMConfig,
        *,
        system: str,
        user: str,
        json_schema: dict[str, Any],
        schema_name: str,
    ) -> str | None: ...


_COMPLETERS: dict[str, _Completer] = {
    "openai": _openai_complete,
    "anthropic": _anthropic_complete,
}
