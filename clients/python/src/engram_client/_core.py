"""What the sync and async clients share: configuration, the request each operation makes,
the retry policy and how a response becomes a model or an :class:`EngramError`.

Each API operation is a function returning a :class:`Call` (method, path, body, parser), so
``Engram`` and ``AsyncEngram`` differ only in how they send it.
"""

from __future__ import annotations

import json as _json
import os
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from engram_client.errors import (
    EngramError,
    InvalidRequestError,
    RateLimitedError,
    error_for_status,
)
from engram_client.models import (
    ArticleProposal,
    GraduationResult,
    KnowledgeContext,
    KnowledgeSearch,
    Memory,
    MemoryPage,
    MemoryRecall,
    MergedRecall,
    Project,
    PromotionResult,
    RecallReferenced,
    SessionCleared,
    SessionHistory,
    SessionTurn,
    Whoami,
)

__version__ = "0.2.0"

DEFAULT_API_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 3
#: The session tier's lifetime when a caller names none (the server requires one).
DEFAULT_SESSION_TTL_SECONDS = 24 * 3600
#: The largest page ``GET /memory`` serves; ``memories()`` walks pages of this size.
MEMORY_PAGE_MAX = 200
SESSION_PAGE_MAX = 200
#: The server's largest batch (``MEMORY_BATCH_MAX_ITEMS``); a longer bulk write is sent in
#: batches of this size.
BATCH_MAX_ITEMS = 500
IDEMPOTENCY_HEADER = "Idempotency-Key"
IMPERSONATION_HEADER = "X-Impersonate-Tenant"
#: Statuses worth retrying: the request was refused before anything was written.
RETRY_STATUSES = frozenset({429, 503})
#: A 409 with this code means "your first attempt is still running": wait and ask again.
IN_PROGRESS_CODE = "idempotency_key_in_progress"
#: A 429 with this code means "this key already has the server's cap of requests running"
#: (docs/operators.md, "Requests in flight"): no budget is spent, a slot frees as soon as one
#: of them ends, so such a refusal is waited out apart from ``max_retries``, for at most
#: ``IN_FLIGHT_WAIT_MAX`` seconds a call.
IN_FLIGHT_CODE = "too_many_requests_in_flight"
IN_FLIGHT_WAIT_MAX = 30.0
#: The server's code for a session id no session may have (docs/memory.md, "Session ids").
INVALID_SESSION_ID_CODE = "invalid_session_id"
#: Failures where the request may or may not have reached Engram; a write is still safe to
#: resend because it carries the same Idempotency-Key.
TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    httpx.NetworkError,
    httpx.TimeoutException,
    httpx.RemoteProtocolError,
)

T = TypeVar("T")


@dataclass(frozen=True)
class ClientOptions:
    """How a client reaches Engram. Unset values come from the environment."""

    base_url: str
    api_key: str
    impersonate_tenant: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    #: First backoff (seconds) when the server gives no Retry-After; doubles per attempt.
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    #: A Retry-After longer than this is not waited for: the error is raised at once.
    max_retry_wait: float = 60.0

    @classmethod
    def resolve(
        cls,
        *,
        base_url: str | None,
        api_key: str | None,
        impersonate_tenant: str | None,
        **overrides: Any,
    ) -> ClientOptions:
        url = base_url if base_url is not None else os.environ.get("ENGRAM_API_URL", "")
        key = api_key if api_key is not None else os.environ.get("ENGRAM_API_KEY", "")
        tenant = (
            impersonate_tenant
            if impersonate_tenant is not None
            else os.environ.get("ENGRAM_IMPERSONATE_TENANT", "")
        )
        return cls(
            base_url=url.strip().rstrip("/") or DEFAULT_API_URL,
            api_key=key.strip(),
            impersonate_tenant=tenant.strip(),
            **{name: value for name, value in overrides.items() if value is not None},
        )

    def headers(self) -> dict[str, str]:
        headers = {"User-Agent": f"engram-client/{__version__}", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if self.impersonate_tenant:
            headers[IMPERSONATION_HEADER] = self.impersonate_tenant
        return headers

    def with_overrides(
        self, *, api_key: str | None = None, impersonate_tenant: str | None = None
    ) -> ClientOptions:
        options = self
        if api_key is not None:
            options = replace(options, api_key=api_key.strip())
        if impersonate_tenant is not None:
            options = replace(options, impersonate_tenant=impersonate_tenant.strip())
        return options


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request and how to read its 2xx body."""

    method: str
    path: str
    parse: Callable[[Any], T]
    json: Any = None
    params: Mapping[str, Any] | None = None
    #: Writes carry an Idempotency-Key, minted once and reused by every retry of this call.
    idempotency_key: str | None = field(default=None)
    #: What the call counts against a rate limit: a batch counts its items.
    cost: int = 1

    def request_headers(self) -> dict[str, str]:
        return {IDEMPOTENCY_HEADER: self.idempotency_key} if self.idempotency_key else {}

    def query(self) -> dict[str, Any] | None:
        if not self.params:
            return None
        clean = {
            name: _query_value(value) for name, value in self.params.items() if value is not None
        }
        return clean or None


def _query_value(value: Any) -> str | list[str]:
    """A list repeats its parameter (``?tags=a&tags=b``); booleans are ``true``/``false``."""
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _write(
    method: str, path: str, parse: Callable[[Any], T], json: Any = None, *, cost: int = 1
) -> Call[T]:
    return Call(method, path, parse, json=json, idempotency_key=str(uuid.uuid4()), cost=cost)


def _segment(value: object) -> str:
    """A path segment that cannot reshape the URL, whatever the caller passed."""
    return quote(str(value), safe="")


#: A time the server reads: a datetime (naive means UTC) or an ISO 8601 string.
When = datetime | str

#: A tag and metadata filter for recall and list (docs/recall.md, "Filters"), e.g.
#: ``{"tags": "infra", "metadata": {"kind": "task", "score": {"$gte": 3}}}``.
Filter = Mapping[str, Any]


def _when(value: When | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).isoformat()


def _body(**fields: Any) -> dict[str, Any]:
    return {
        name: (str(value) if isinstance(value, uuid.UUID) else value)
        for name, value in fields.items()
        if value is not None
    }


def _data(model: type[BaseModel]) -> Callable[[Any], Any]:
    return lambda body: model.model_validate(body["data"])


def _whole(model: type[BaseModel]) -> Callable[[Any], Any]:
    return model.model_validate


# ----------------------------------------------------------------------------- write inputs


class NewMemory(BaseModel):
    """A long-term memory to write (``remember_many``)."""

    text: str
    context: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    project_id: str | None = None
    confidence: float | None = None
    #: When it happened or was said (default: the time of the write).
    occurred_at: datetime | None = None
    #: When the fact became true (default: ``occurred_at``).
    valid_from: datetime | None = None
    #: Embed it before the write answers, so semantic recall finds it at once.
    embed_now: bool | None = None

    def item(self) -> dict[str, Any]:
        return {"tier": "long_term", **self.model_dump(mode="json", exclude_none=True)}


class NewTurn(BaseModel):
    """A session turn to append (``remember_many``, ``session_append``).

    Values are checked by the server, not here, so every caller meets one contract and one
    set of error codes.
    """

    session_id: str
    content: str
    role: str = "user"
    metadata: dict[str, Any] | None = None
    ttl_seconds: int | None = None
    expires_at: datetime | None = None

    def item(self) -> dict[str, Any]:
        """The turn as a ``tier: "session"`` item (a batch, or the deprecated single form)."""
        return {"tier": "session", "session_id": self.session_id, **self.fields()}

    def fields(self) -> dict[str, Any]:
        """The turn's own fields, the body of ``POST …/sessions/{session_id}/turns``."""
        fields = self.model_dump(mode="json", exclude_none=True, exclude={"session_id"})
        if self.ttl_seconds is None and self.expires_at is None:
            fields["ttl_seconds"] = DEFAULT_SESSION_TTL_SECONDS
        return fields


def _written(item: Any) -> Memory | SessionTurn:
    if isinstance(item, dict) and item.get("tier") == "session":
        return SessionTurn.model_validate(item)
    return Memory.model_validate(item)


# ----------------------------------------------------------------------------- operations


def whoami() -> Call[Whoami]:
    return Call("GET", "/api/v1/tenancy/whoami", _data(Whoami))


def remember(
    text: str,
    *,
    context: str | None,
    tags: Sequence[str] | None,
    metadata: Mapping[str, Any] | None,
    project_id: str | uuid.UUID | None,
    confidence: float | None,
    supersedes: str | uuid.UUID | None,
    occurred_at: When | None = None,
    valid_from: When | None = None,
    embed_now: bool = False,
) -> Call[Memory]:
    body = _body(
        text=text,
        context=context,
        tags=None if tags is None else list(tags),
        metadata=None if metadata is None else dict(metadata),
        project_id=project_id,
        confidence=confidence,
        supersedes=supersedes,
        occurred_at=_when(occurred_at),
        valid_from=_when(valid_from),
        embed_now=embed_now or None,
    )
    return _write("POST", "/api/v1/memory", _data(Memory), body)


def remember_many(items: Sequence[NewMemory | NewTurn | str]) -> Call[list[Memory | SessionTurn]]:
    payload = [
        NewMemory(text=item).item() if isinstance(item, str) else item.item() for item in items
    ]
    return _write(
        "POST",
        "/api/v1/memory/batch",
        lambda body: [_written(item) for item in body["data"]],
        {"items": payload},
        cost=len(payload),
    )


def check_session_id(session_id: str) -> None:
    """Refuse the empty session id here: no URL path segment can name it (an empty segment
    is one a proxy may merge away). Every other id is the server's to judge."""
    if not session_id:
        raise InvalidRequestError("session_id must not be empty.", code=INVALID_SESSION_ID_CODE)


def _session_path(session_id: str, suffix: str = "") -> str:
    """``/api/v1/memory/sessions/{session_id}{suffix}`` for any session id.

    The server decodes the session segment once more after HTTP's own percent-decoding
    (which happens before routing, so an encoded ``/`` would split the path, and ``.``/``..``
    segments are resolved away by HTTP stacks), so the id is escaped once (``%`` → ``%25``,
    ``/`` → ``%2F``, the dots of ``.``/``..`` → ``%2E``) and then percent-encoded.
    """
    check_session_id(session_id)
    escaped = session_id.replace("%", "%25").replace("/", "%2F")
    if escaped in {".", ".."}:
        escaped = escaped.replace(".", "%2E")
    return f"/api/v1/memory/sessions/{quote(escaped, safe='')}{suffix}"


def session_append(turn: NewTurn) -> Call[SessionTurn]:
    return _write(
        "POST", _session_path(turn.session_id, "/turns"), _data(SessionTurn), turn.fields()
    )


def session_history(session_id: str, *, limit: int, offset: int) -> Call[SessionHistory]:
    return Call(
        "GET",
        _session_path(session_id),
        _whole(SessionHistory),
        params={"limit": limit, "offset": offset},
    )


def session_clear(session_id: str) -> Call[SessionCleared]:
    return _write("DELETE", _session_path(session_id), _data(SessionCleared))


def session_pop(session_id: str) -> Call[SessionTurn]:
    return _write("DELETE", _session_path(session_id, "/turns/last"), _data(SessionTurn))


def session_delete_turn(session_id: str, seq: int) -> Call[SessionTurn]:
    return _write("DELETE", _session_path(session_id, f"/turns/{int(seq)}"), _data(SessionTurn))


def recall(
    query: str,
    *,
    limit: int | None,
    project_id: str | uuid.UUID | None,
    include_superseded: bool,
    mode: str | None,
    as_of: When | None = None,
    filter: Filter | None = None,
) -> Call[MemoryRecall]:
    body = _body(
        query=query,
        limit=limit,
        project_id=project_id,
        include_superseded=include_superseded,
        mode=mode,
        as_of=_when(as_of),
        filter=None if filter is None else dict(filter),
    )
    return Call("POST", "/api/v1/memory/recall", _whole(MemoryRecall), json=body)


def list_memories(
    *,
    limit: int | None,
    offset: int | None,
    project_id: str | uuid.UUID | None,
    source: str | None,
    tags: Sequence[str] | None,
    include_superseded: bool,
    all_subjects: bool,
    as_of: When | None = None,
    filter: Filter | None = None,
) -> Call[MemoryPage]:
    params = {
        "limit": limit,
        "offset": offset,
        "project_id": project_id,
        "source": source,
        "tags": None if not tags else list(tags),
        "include_superseded": include_superseded,
        "all_subjects": all_subjects or None,
        "as_of": _when(as_of),
        "filter": None if not filter else _json.dumps(dict(filter), separators=(",", ":")),
    }
    return Call("GET", "/api/v1/memory", _whole(MemoryPage), params=params)


def forget(memory_id: str | uuid.UUID) -> Call[None]:
    return _write("DELETE", f"/api/v1/memory/{_segment(memory_id)}", lambda _body: None)


def promote(session_id: str) -> Call[PromotionResult]:
    return _write(
        "POST", "/api/v1/memory/promote", _data(PromotionResult), {"session_id": session_id}
    )


def graduate(memory_id: str | uuid.UUID, *, re_scope: str | None) -> Call[GraduationResult]:
    body = _body(memory_id=str(memory_id), re_scope=re_scope)
    return _write("POST", "/api/v1/memory/graduate", _data(GraduationResult), body)


def recall_context(
    query: str,
    *,
    limit: int | None,
    project_id: str | uuid.UUID | None,
    session_id: str | None,
    as_of: When | None = None,
    memory_filter: Filter | None = None,
) -> Call[MergedRecall]:
    body = _body(
        query=query,
        limit=limit,
        project_id=project_id,
        session_id=session_id,
        as_of=_when(as_of),
        memory_filter=None if memory_filter is None else dict(memory_filter),
    )
    return Call("POST", "/api/v1/recall", _whole(MergedRecall), json=body)


def referenced(
    recall_id: str | uuid.UUID, article_ids: Sequence[str | uuid.UUID]
) -> Call[RecallReferenced]:
    return _write(
        "POST",
        f"/api/v1/recall/{_segment(recall_id)}/referenced",
        _data(RecallReferenced),
        {"article_ids": [str(article_id) for article_id in article_ids]},
    )


def resolve_project(*, repo_url: str | None, slug: str | None, name: str | None) -> Call[Project]:
    params = {"repo_url": repo_url, "slug": slug, "name": name}
    return Call("GET", "/api/v1/projects/resolve", _data(Project), params=params)


def knowledge_search(
    query: str,
    *,
    limit: int | None,
    project_id: str | uuid.UUID | None,
    session_id: str | None,
) -> Call[KnowledgeSearch]:
    body = _body(query=query, limit=limit, project_id=project_id, session_id=session_id)
    return Call("POST", "/api/v1/knowledge/search", _whole(KnowledgeSearch), json=body)


def knowledge_context(
    query: str, *, limit: int | None, project_id: str | uuid.UUID | None
) -> Call[KnowledgeContext]:
    # A POST: the query stays out of the URL, so out of proxies' and servers' access logs.
    body = _body(query=query, limit=limit, project_id=project_id)
    return Call("POST", "/api/v1/knowledge/context", _whole(KnowledgeContext), json=body)


def knowledge_create(
    *,
    title: str,
    body: str,
    category: str,
    tags: Sequence[str] | None,
    project_id: str | uuid.UUID | None,
    visibility: str | None,
) -> Call[ArticleProposal]:
    payload = _body(
        title=title,
        body=body,
        category=category,
        tags=None if tags is None else list(tags),
        project_id=project_id,
        visibility=visibility,
    )
    return _write("POST", "/api/v1/knowledge/articles", _data(ArticleProposal), payload)


def raw(method: str, path: str, *, json: Any, params: Mapping[str, Any] | None) -> Call[Any]:
    """Any endpoint, its decoded JSON body returned as is; writes still get a key."""
    method = method.upper()
    if method in {"POST", "PUT", "PATCH", "DELETE"}:
        return Call(
            method,
            path,
            lambda body: body,
            json=json,
            params=params,
            idempotency_key=str(uuid.uuid4()),
        )
    return Call(method, path, lambda body: body, json=json, params=params)


# ----------------------------------------------------------------------------- responses


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when absent or bad."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def backoff_seconds(options: ClientOptions, attempt: int) -> float:
    """Exponential backoff with jitter (half to full), for retries without a server hint."""
    ceiling = min(options.backoff_max, options.backoff_base * (2.0**attempt))
    return ceiling * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not security


def _error(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _error_code(response: httpx.Response) -> str | None:
    error = _error(response)
    return str(error["code"]) if "code" in error else None


def rate_limit_per_window(details: Mapping[str, Any]) -> int | None:
    """What one window of the limit a 429 names admits (its ``details.limit``), if given."""
    limit = details.get("limit")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def in_flight_delay(
    options: ClientOptions, response: httpx.Response, *, waited: float
) -> float | None:
    """How long to wait before resending a request refused because this key had the server's
    cap of requests in flight, or None when the response is no such refusal, the client does
    not retry (``max_retries`` 0) or the call has waited ``IN_FLIGHT_WAIT_MAX`` already.

    A random share of the server's hint: a burst's refused requests (an ``asyncio.gather`` of
    more calls than the cap) then come back one after another rather than all at once, to be
    refused together again.
    """
    if options.max_retries == 0 or waited >= IN_FLIGHT_WAIT_MAX:
        return None
    if response.status_code != 429 or _error_code(response) != IN_FLIGHT_CODE:
        return None
    hinted = retry_after_seconds(response) or 1.0
    ceiling = min(hinted, IN_FLIGHT_WAIT_MAX - waited)
    return ceiling * (0.1 + 0.9 * random.random())  # noqa: S311 - jitter, not security


def retry_delay(
    options: ClientOptions, response: httpx.Response, attempt: int, *, cost: int = 1
) -> float | None:
    """How long to wait before resending, or None when this response is final.

    A 429 for a call costing more than a whole window admits is final at once: no wait
    would let it through (a batch must be split).
    """
    if attempt >= options.max_retries:
        return None
    retryable = response.status_code in RETRY_STATUSES or (
        response.status_code == 409 and _error_code(response) == IN_PROGRESS_CODE
    )
    if not retryable:
        return None
    if response.status_code == 429:
        details = _error(response).get("details")
        admitted = rate_limit_per_window(details) if isinstance(details, dict) else None
        if admitted is not None and cost > admitted:
            return None
    hinted = retry_after_seconds(response)
    if hinted is None:
        return backoff_seconds(options, attempt)
    return hinted if hinted <= options.max_retry_wait else None


def transport_delay(options: ClientOptions, attempt: int) -> float | None:
    return None if attempt >= options.max_retries else backoff_seconds(options, attempt)


def connection_error(options: ClientOptions, exc: Exception) -> EngramError:
    from engram_client.errors import EngramConnectionError

    return EngramConnectionError(
        f"could not reach Engram at {options.base_url}: {exc}", code="engram_unreachable"
    )


def parse_response(call: Call[T], response: httpx.Response) -> T:
    """The call's model for a 2xx response; the matching :class:`EngramError` otherwise."""
    if response.is_success:
        if response.status_code == 204 or not response.content:
            return call.parse(None)
        return call.parse(response.json())
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    code = str(error.get("code") or f"http_{response.status_code}")
    message = str(error.get("message") or response.reason_phrase)
    error_class = error_for_status(response.status_code)
    if error_class is RateLimitedError:
        raise RateLimitedError(
            message,
            code=code,
            status=response.status_code,
            details=details,
            retry_after=retry_after_seconds(response),
        )
    raise error_class(message, code=code, status=response.status_code, details=details)
