"""``Engram``: the synchronous client."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx

from engram_client import _core
from engram_client._core import ClientOptions, Filter, NewMemory, NewTurn, When
from engram_client.errors import NotFoundError
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

T = TypeVar("T")
Role = Literal["user", "assistant", "system", "fact"]


class Engram:
    """A client for one API key. Scope (tenant, subject) is the key's: no call takes it.

    Arguments left out come from ``ENGRAM_API_URL`` (default ``http://127.0.0.1:8000``),
    ``ENGRAM_API_KEY`` and, for a superadmin key, ``ENGRAM_IMPERSONATE_TENANT``. Every write
    carries a fresh ``Idempotency-Key`` that its retries reuse, so a retried write is stored
    once. 429 and 503 are retried up to ``max_retries`` times, waiting ``Retry-After``.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        impersonate_tenant: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        backoff_base: float | None = None,
        max_retry_wait: float | None = None,
        transport: httpx.BaseTransport | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.options = ClientOptions.resolve(
            base_url=base_url,
            api_key=api_key,
            impersonate_tenant=impersonate_tenant,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            max_retry_wait=max_retry_wait,
        )
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(
            base_url=self.options.base_url, timeout=self.options.timeout, transport=transport
        )

    @property
    def base_url(self) -> str:
        return self.options.base_url

    def with_options(
        self, *, api_key: str | None = None, impersonate_tenant: str | None = None
    ) -> Engram:
        """The same client (same connection pool) acting with another key or tenant."""
        clone = object.__new__(Engram)
        clone.options = self.options.with_overrides(
            api_key=api_key, impersonate_tenant=impersonate_tenant
        )
        clone._owns_http = False
        clone._http = self._http
        return clone

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Engram:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------------- sending

    def _send(self, call: _core.Call[T]) -> T:
        headers = {**self.options.headers(), **call.request_headers()}
        attempt = 0
        waited_in_flight = 0.0
        while True:
            try:
                response = self._http.request(
                    call.method,
                    f"{self.options.base_url}{call.path}",
                    json=call.json,
                    params=call.query(),
                    headers=headers,
                )
            except _core.TRANSPORT_ERRORS as exc:
                delay = _core.transport_delay(self.options, attempt)
                if delay is None:
                    raise _core.connection_error(self.options, exc) from exc
            else:
                in_flight = _core.in_flight_delay(self.options, response, waited=waited_in_flight)
                if in_flight is not None:
                    waited_in_flight += in_flight
                    time.sleep(in_flight)
                    continue
                delay = _core.retry_delay(self.options, response, attempt, cost=call.cost)
                if delay is None:
                    return _core.parse_response(call, response)
            time.sleep(delay)
            attempt += 1

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """Any endpoint by path (``/api/v1/...``): its decoded JSON body, or None for 204."""
        return self._send(_core.raw(method, path, json=json, params=params))

    # ------------------------------------------------------------------------- memory

    def whoami(self) -> Whoami:
        return self._send(_core.whoami())

    def remember(
        self,
        text: str,
        *,
        context: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        project_id: str | uuid.UUID | None = None,
        confidence: float | None = None,
        supersedes: str | uuid.UUID | None = None,
        occurred_at: When | None = None,
        valid_from: When | None = None,
        embed_now: bool = False,
    ) -> Memory:
        """Write one long-term memory (embedded in the background; keyword-findable at once).

        ``supersedes`` names one of your live memories this one replaces. ``occurred_at``: when
        it happened (default: now); ``valid_from``: when the fact became true (default:
        ``occurred_at``); a datetime (naive means UTC) or an ISO 8601 string. ``embed_now``
        embeds it before the write answers, so semantic recall finds it at once too.
        """
        return self._send(
            _core.remember(
                text,
                context=context,
                tags=tags,
                metadata=metadata,
                project_id=project_id,
                confidence=confidence,
                supersedes=supersedes,
                occurred_at=occurred_at,
                valid_from=valid_from,
                embed_now=embed_now,
            )
        )

    def remember_many(
        self, items: Sequence[NewMemory | NewTurn | str]
    ) -> list[Memory | SessionTurn]:
        """Write up to 500 memories and/or session turns, all or nothing, in one request."""
        return self._send(_core.remember_many(items))

    def recall(
        self,
        query: str,
        *,
        limit: int | None = None,
        project_id: str | uuid.UUID | None = None,
        include_superseded: bool = False,
        mode: Literal["semantic", "keyword", "hybrid"] | None = None,
        as_of: When | None = None,
        filter: Filter | None = None,
    ) -> MemoryRecall:
        """Your memories for ``query``, best first (``.hits``: each ``.memory`` and ``.score``).

        ``as_of``: the memories that held at that time (valid time), superseded since or not.
        Each hit says whether it still holds (``.validity``). ``filter`` narrows by tags and
        metadata before ranking (``{"tags": "infra", "metadata": {"score": {"$gte": 3}}}``;
        docs/recall.md, "Filters").
        """
        return self._send(
            _core.recall(
                query,
                limit=limit,
                project_id=project_id,
                include_superseded=include_superseded,
                mode=mode,
                as_of=as_of,
                filter=filter,
            )
        )

    def list_memories(
        self,
        *,
        limit: int | None = None,
        offset: int | None = None,
        project_id: str | uuid.UUID | None = None,
        source: Literal["explicit", "promoted"] | None = None,
        tags: Sequence[str] | None = None,
        include_superseded: bool = False,
        all_subjects: bool = False,
        as_of: When | None = None,
        filter: Filter | None = None,
    ) -> MemoryPage:
        """One page of your memories, newest first (server default 50 a page; at most 200).

        ``tags`` keeps memories carrying all of them; ``filter`` narrows as ``recall``'s
        does; ``all_subjects`` lists every subject of the tenant, for a superadmin key;
        ``as_of`` lists those that held at that time.
        """
        return self._send(
            _core.list_memories(
                limit=limit,
                offset=offset,
                project_id=project_id,
                source=source,
                tags=tags,
                include_superseded=include_superseded,
                all_subjects=all_subjects,
                as_of=as_of,
                filter=filter,
            )
        )

    def memories(
        self,
        *,
        project_id: str | uuid.UUID | None = None,
        source: Literal["explicit", "promoted"] | None = None,
        tags: Sequence[str] | None = None,
        include_superseded: bool = False,
        all_subjects: bool = False,
        page_size: int = _core.MEMORY_PAGE_MAX,
        as_of: When | None = None,
        filter: Filter | None = None,
    ) -> Iterator[Memory]:
        """Every memory ``list_memories`` would page through, fetched page by page."""
        offset = 0
        while True:
            page = self.list_memories(
                limit=page_size,
                offset=offset,
                project_id=project_id,
                source=source,
                tags=tags,
                include_superseded=include_superseded,
                all_subjects=all_subjects,
                as_of=as_of,
                filter=filter,
            )
            yield from page.data
            offset += len(page.data)
            if not page.data or offset >= page.meta.total_count:
                return

    def forget(self, memory_id: str | uuid.UUID) -> None:
        """Delete one of your memories (and the versions it superseded)."""
        self._send(_core.forget(memory_id))

    # ------------------------------------------------------------------------- sessions

    def session_append(
        self,
        session_id: str,
        content: str,
        *,
        role: Role = "user",
        metadata: Mapping[str, Any] | None = None,
        ttl_seconds: int | None = None,
        expires_at: datetime | None = None,
    ) -> SessionTurn:
        """Append one turn to a session (24 h TTL unless ``ttl_seconds``/``expires_at``)."""
        turn = NewTurn(
            session_id=session_id,
            content=content,
            role=role,
            metadata=None if metadata is None else dict(metadata),
            ttl_seconds=ttl_seconds,
            expires_at=expires_at,
        )
        return self._send(_core.session_append(turn))

    def session_history(
        self, session_id: str, *, limit: int = 200, offset: int = 0
    ) -> SessionHistory:
        """One page of a session's turns, in append order."""
        return self._send(_core.session_history(session_id, limit=limit, offset=offset))

    def session_turns(self, session_id: str) -> Iterator[SessionTurn]:
        """Every turn of a session, in append order."""
        offset = 0
        while True:
            page = self.session_history(session_id, limit=_core.SESSION_PAGE_MAX, offset=offset)
            yield from page.data
            offset += len(page.data)
            if not page.data or offset >= page.meta.total_count:
                return

    def session_clear(self, session_id: str) -> SessionCleared:
        """Delete every turn of one of your sessions (``deleted`` 0 when there were none)."""
        return self._send(_core.session_clear(session_id))

    def session_pop(self, session_id: str) -> SessionTurn | None:
        """Delete and return the latest live turn of a session; None when it has none.

        Retried attempts reuse one Idempotency-Key, so a retry after a lost response returns
        the turn the first attempt popped instead of popping another.
        """
        try:
            return self._send(_core.session_pop(session_id))
        except NotFoundError:
            return None

    def session_delete_turn(self, session_id: str, seq: int) -> SessionTurn:
        """Delete one live turn of a session by its ``seq`` (``NotFoundError`` if none)."""
        return self._send(_core.session_delete_turn(session_id, seq))

    def promote(self, session_id: str) -> PromotionResult:
        """Compile a finished session into long-term memories, in the background."""
        return self._send(_core.promote(session_id))

    def graduate(
        self, memory_id: str | uuid.UUID, *, re_scope: Literal["global"] | None = None
    ) -> GraduationResult:
        """Graduate one of your memories into an (owner-visible) knowledge article."""
        return self._send(_core.graduate(memory_id, re_scope=re_scope))

    # ------------------------------------------------------------------------- merged recall

    def recall_context(
        self,
        query: str,
        *,
        limit: int | None = None,
        project_id: str | uuid.UUID | None = None,
        session_id: str | None = None,
        as_of: When | None = None,
        memory_filter: Filter | None = None,
    ) -> MergedRecall:
        """Memory ∪ knowledge for ``query`` in one ranked list; keep ``meta.recall_id``.

        ``as_of`` recalls the memories that held at that time (knowledge as it is now);
        ``memory_filter`` narrows the memory half by tags and metadata (as ``recall``'s
        ``filter``)."""
        return self._send(
            _core.recall_context(
                query,
                limit=limit,
                project_id=project_id,
                session_id=session_id,
                as_of=as_of,
                memory_filter=memory_filter,
            )
        )

    def referenced(
        self, recall_id: str | uuid.UUID, article_ids: Sequence[str | uuid.UUID]
    ) -> RecallReferenced:
        """Report which knowledge items of a ``recall_context`` you used."""
        return self._send(_core.referenced(recall_id, article_ids))

    # ------------------------------------------------------------------------- projects, knowledge

    def resolve_project(
        self,
        *,
        repo_url: str | None = None,
        slug: str | None = None,
        name: str | None = None,
    ) -> Project:
        """The project for a repository, slug or name (precedence slug > repo_url > name)."""
        return self._send(_core.resolve_project(repo_url=repo_url, slug=slug, name=name))

    def knowledge_search(
        self,
        query: str,
        *,
        limit: int | None = None,
        project_id: str | uuid.UUID | None = None,
        session_id: str | None = None,
    ) -> KnowledgeSearch:
        """Search the tenant's shared knowledge base (summaries and snippets)."""
        return self._send(
            _core.knowledge_search(query, limit=limit, project_id=project_id, session_id=session_id)
        )

    def knowledge_context(
        self,
        query: str = "",
        *,
        limit: int | None = None,
        project_id: str | uuid.UUID | None = None,
    ) -> KnowledgeContext:
        """The deep read: the top articles with full bodies, plus the articles they link to."""
        return self._send(_core.knowledge_context(query, limit=limit, project_id=project_id))

    def knowledge_create(
        self,
        title: str,
        body: str,
        category: Literal["pattern", "decision", "finding", "reference"],
        *,
        tags: Sequence[str] | None = None,
        project_id: str | uuid.UUID | None = None,
        visibility: Literal["tenant", "owner"] | None = None,
    ) -> ArticleProposal:
        """Write an article through the novelty gate (``.verdict`` says what happened)."""
        return self._send(
            _core.knowledge_create(
                title=title,
                body=body,
                category=category,
                tags=tags,
                project_id=project_id,
                visibility=visibility,
            )
        )
