"""Concurrent clients: single writes, batch writes, session turns + promotions, recalls.

Each write carries texts unique to it (its markers) and an ``Idempotency-Key`` it reuses on
every retry. A write is *acknowledged* when a 2xx comes back; the audit then expects each of
its markers stored exactly once. Every response that is not a 2xx is recorded with the time it
arrived, so the report can tell the allowed errors (503 with ``Retry-After`` while the database
was down) from everything else.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from typing_extensions import override

RETRY_DEADLINE_S = 120.0
MAX_BACKOFF_S = 1.0


@dataclass
class Failure:
    at: float  # time.monotonic()
    kind: str  # the op
    status: int  # 0 = no HTTP response (transport error)
    code: str  # error code from the envelope, or the transport exception's class
    retry_after: bool


@dataclass
class Op:
    kind: str
    markers: list[str]  # memory texts, or session-turn contents, this op writes
    tier: str = "memory"  # memory | session | read
    acknowledged: bool = False
    attempts: int = 0
    gave_up: str = ""


@dataclass
class ClientLog:
    ops: list[Op] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Client(threading.Thread):
    def __init__(
        self, *, index: int, base_url: str, key: str, stop: threading.Event, log: ClientLog
    ) -> None:
        super().__init__(name=f"fault-client-{index}", daemon=True)
        self.index = index
        self.stop = stop
        self.log = log
        self.http = httpx.Client(
            base_url=f"{base_url}/api/v1",
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx.Timeout(30.0, connect=5.0),
        )
        self.random = random.Random(index)  # noqa: S311 - a reproducible op mix, not a secret
        self.sequence = 0

    # ------------------------------------------------------------------ requests

    def _marker(self, what: str) -> str:
        self.sequence += 1
        return f"client {self.index} {what} {self.sequence}: remember token {uuid.uuid4().hex[:12]}"

    def _send(self, op: Op, path: str, body: dict[str, Any], *, write: bool) -> Any:
        headers = {"Idempotency-Key": str(uuid.uuid4())} if write else {}
        deadline = time.monotonic() + RETRY_DEADLINE_S
        with self.log.lock:
            self.log.ops.append(op)
        while time.monotonic() < deadline:
            op.attempts += 1
            with self.log.lock:
                self.log.requests += 1
            try:
                response = self.http.post(path, json=body, headers=headers)
            except httpx.TransportError as exc:
                self._fail(op, 0, type(exc).__name__, retry_after=False)
                time.sleep(MAX_BACKOFF_S)
                continue
            if response.is_success:
                op.acknowledged = True
                return response.json()
            code = _error_code(response)
            retry_after = "retry-after" in response.headers
            self._fail(op, response.status_code, code, retry_after=retry_after)
            if response.status_code in (409, 429) or response.status_code >= 500:
                wait = _retry_after_seconds(response)
                time.sleep(min(wait, MAX_BACKOFF_S))
                continue
            op.gave_up = f"{response.status_code} {code}"
            return None
        op.gave_up = "deadline"
        return None

    def _fail(self, op: Op, status: int, code: str, *, retry_after: bool) -> None:
        with self.log.lock:
            self.log.failures.append(
                Failure(
                    at=time.monotonic(),
                    kind=op.kind,
                    status=status,
                    code=code,
                    retry_after=retry_after,
                )
            )

    # ------------------------------------------------------------------ operations

    def single_write(self) -> None:
        text = self._marker("fact")
        self._send(Op("single_write", [text]), "/memory", {"text": text}, write=True)

    def batch_write(self) -> None:
        texts = [self._marker("batch fact") for _ in range(3)]
        self._send(
            Op("batch_write", texts),
            "/memory/batch",
            {"items": [{"text": text} for text in texts]},
            write=True,
        )

    def session_and_promote(self) -> None:
        session_id = f"s-{self.index}-{uuid.uuid4().hex[:8]}"
        for role, what in (("user", "I prefer"), ("assistant", "Noted, you prefer")):
            content = f"{what} deploying with tool {self._marker('turn')}"
            body = {"role": role, "content": content, "ttl_seconds": 3600}
            self._send(
                Op("session_turn", [content], tier="session"),
                f"/memory/sessions/{session_id}/turns",
                body,
                write=True,
            )
        self._send(
            Op("promote", [], tier="read"),
            "/memory/promote",
            {"session_id": session_id},
            write=True,
        )

    def recall(self) -> None:
        self._send(
            Op("recall", [], tier="read"),
            "/memory/recall",
            {"query": f"remember token of client {self.index}", "limit": 5},
            write=False,
        )

    @override
    def run(self) -> None:
        operations = [
            (self.single_write, 45),
            (self.batch_write, 20),
            (self.recall, 25),
            (self.session_and_promote, 10),
        ]
        choices, weights = zip(*operations, strict=True)
        while not self.stop.is_set():
            self.random.choices(choices, weights)[0]()
            time.sleep(0.02)
        self.http.close()


def _error_code(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "no_envelope"


def _retry_after_seconds(response: httpx.Response) -> float:
    try:
        return float(response.headers.get("retry-after", "0.5"))
    except ValueError:
        return 0.5
