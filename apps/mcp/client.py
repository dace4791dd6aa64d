"""A small client for Engram's HTTP API, shared by the MCP server and the stop hook.

Everything here speaks HTTP only (DESIGN §1: the MCP layer never touches the ORM). Scope is
the API key's: no call takes a tenant or subject.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

DEFAULT_API_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT_SECONDS = 30.0


class EngramApiError(Exception):
    """An error envelope from the API, with its stable code."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


@dataclass(frozen=True)
class EngramClientConfig:
    api_url: str
    api_key: str

    @classmethod
    def from_env(cls, *, require_key: bool = True) -> EngramClientConfig:
        """Read ``ENGRAM_API_URL`` and ``ENGRAM_API_KEY``.

        ``require_key=False`` is for a server whose callers bring their own key on each request
        (the MCP server over streamable HTTP); the configured key is then only a fallback.
        """
        api_key = os.environ.get("ENGRAM_API_KEY", "").strip()
        if require_key and not api_key:
            raise RuntimeError("ENGRAM_API_KEY is not set")
        api_url = os.environ.get("ENGRAM_API_URL", "").strip().rstrip("/") or DEFAULT_API_URL
        return cls(api_url=api_url, api_key=api_key)


class EngramClient:
    def __init__(
        self, config: EngramClientConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.api_url = config.api_url
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._http = httpx.Client(
            base_url=config.api_url,
            headers=headers,
            timeout=DEFAULT_TIMEOUT_SECONDS,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        api_key: str | None = None,
    ) -> dict[str, Any]:
        """The decoded body of a 2xx response; an :class:`EngramApiError` otherwise.

        ``api_key`` replaces the configured key for this one request (a caller's own key,
        forwarded by the MCP server over HTTP). Transport failures raise ``httpx.HTTPError``.
        """
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        response = self._http.request(
            method, path, json=json, params=clean_params or None, headers=headers
        )
        if response.status_code == 204:
            return {"data": None, "meta": {}}
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success and isinstance(body, dict):
            return body
        error = body.get("error", {}) if isinstance(body, dict) else {}
        raise EngramApiError(
            status=response.status_code,
            code=str(error.get("code", f"http_{response.status_code}")),
            message=str(error.get("message", response.reason_phrase)),
            details=error.get("details", {}) if isinstance(error.get("details"), dict) else {},
        )
