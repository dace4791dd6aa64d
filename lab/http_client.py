"""A keep-alive HTTP/1.1 client for the lab's latency and load measurements.

The standard library's client rather than httpx: the lab's clients share the server's two
cores, and httpx spends several times the CPU per request, which the server's figures would
then pay for. One instance is one connection, for one thread.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit


class KeepAliveClient:
    """Posts JSON on one kept connection and returns the status as a string.

    A transport error closes the connection (the next request reconnects) and comes back as
    its exception's name, so a caller counts it like any other non-2xx outcome.
    """

    def __init__(self, url: str, *, token: str | None = None) -> None:
        parts = urlsplit(url)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._https = parts.scheme == "https"
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict[str, Any], *, token: str | None = None) -> str:
        status, _payload = self._exchange(path, body, token=token)
        return status

    def post_response(
        self, path: str, body: dict[str, Any], *, token: str | None = None
    ) -> tuple[str, bytes]:
        """The status as a string and the raw response body (empty after a transport error)."""
        return self._exchange(path, body, token=token)

    def post_json(self, path: str, body: dict[str, Any], *, token: str | None = None) -> Any:
        """The response's parsed JSON body; anything but a 2xx raises ``RuntimeError``."""
        status, payload = self._exchange(path, body, token=token)
        if not status.startswith("2"):
            raise RuntimeError(f"POST {path} answered {status}")
        return json.loads(payload)

    def _exchange(self, path: str, body: dict[str, Any], *, token: str | None) -> tuple[str, bytes]:
        headers = (
            self._headers
            if token is None
            else {
                **self._headers,
                "Authorization": f"Bearer {token}",
            }
        )
        if self._connection is None:
            factory = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._connection = factory(self._host, self._port, timeout=30.0)
        try:
            self._connection.request("POST", self._prefix + path, json.dumps(body), headers)
            response = self._connection.getresponse()
            return str(response.status), response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            return type(exc).__name__, b""

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
