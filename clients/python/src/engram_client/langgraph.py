"""``EngramStore``: a LangGraph long-term memory store (``BaseStore``) over Engram.

Requires the ``langgraph`` extra: ``pip install 'engram-client[langgraph]'``.

Every item is one long-term memory of the API key's subject, so whatever a graph stores is
also what ``recall`` and merged recall find for that agent. The mapping (docs/client.md):

* **value** → ``metadata["langgraph"]["value"]`` (a JSON object; with the namespace, key and
  first write time it must fit the server's metadata cap, ``ENGRAM_METADATA_MAX_BYTES``,
  16 KiB serialized by default: a larger value is ``metadata_too_large``).
* **text** (what Engram embeds and keyword-indexes) → the fields named by the put's ``index``
  (LangGraph field paths, e.g. ``["text", "tags[*]"]``) or else the store's index fields
  (``index={"fields": …}`` or ``index_fields``); without either, the value's ``text``,
  ``content`` or ``memory`` string, or the value as compact JSON. Cut at ``text_max_chars``.
  A put embeds its item before it returns (``embed_now``), so a query search finds it at
  once, as ``InMemoryStore`` would. ``index=False``: the item is written without waiting for
  its embedding and tagged ``lg-noindex``; a query search never ranks it, and lists it only
  after the ranked items when they are fewer than the limit, as ``InMemoryStore`` does.
* **namespace** → tags: ``langgraph`` on every item, and ``lg:<label>.<label>…`` for each
  prefix of the namespace (labels cannot contain ``.``); a prefix longer than Engram's 64
  characters per tag becomes ``lg#<sha256>``. Namespaces are at most 47 labels deep.
* **key** → the tag ``lgk#<sha256 of namespace and key>``: a get is one list by that tag. A
  put on an existing key supersedes the memory (the old version stays in Engram's history and
  out of recall); a put of ``None`` (a delete) forgets it and its history.

Search without a query lists the namespace's memories newest first; with a query it is one
recall narrowed to the namespace's tag, so every item of the namespace can rank, however many
other memories the subject holds (``offset + limit`` at most 100, Engram's largest recall).
A filter (``{"field": value}``, nested objects, ``$eq $ne $gt $gte $lt $lte`` and Engram's
``$in $nin $exists``) is sent as Engram's metadata filter on the value, so it narrows inside
the same query: a number compares with numbers, an ISO date with dates, any other string in
code-point order. ``list_namespaces`` reads the namespace of every item under the longest
wildcard-free leading part of its prefix condition. A batch runs as LangGraph's own stores
run one: its reads first, seeing the items as they were before the batch, then its puts (of
several puts to one item, the last).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import uuid
from collections.abc import Generator, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TypeAlias

from engram_client import _core
from engram_client.async_client import AsyncEngram
from engram_client.client import Engram
from engram_client.errors import ConflictError, EngramError, NotFoundError
from engram_client.models import Memory

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        validate_op_namespace,
    )
    from typing_extensions import override  # a LangGraph dependency
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "engram_client.langgraph needs LangGraph: pip install 'engram-client[langgraph]'"
    ) from exc

__all__ = ["EngramStore"]

ROOT_TAG = "langgraph"
#: The tag of an item put with ``index=False``: query searches do not rank it.
NOINDEX_TAG = "lg-noindex"
METADATA_KEY = "langgraph"
TAG_MAX_CHARS = 64
TAGS_MAX = 50
#: Tags an item carries besides one per namespace prefix: the root tag and its key tag.
FIXED_TAGS = 2
MAX_NAMESPACE_DEPTH = TAGS_MAX - FIXED_TAGS - 1
#: Engram's largest recall: a query search returns at most this many items (offset included).
DEFAULT_SEARCH_POOL = 100
DEFAULT_TEXT_MAX_CHARS = 8_000
#: Requests one ``abatch`` has in flight at once: the server's default per-agent in-flight cap
#: (docs/operators.md, "Requests in flight"), past which it answers 429 and the request retries.
DEFAULT_MAX_CONCURRENCY = 2
DEFAULT_TEXT_FIELDS = ("text", "content", "memory")
#: How many live memories of one key a put reads: one normally; more only after two first
#: puts of the key raced, and the put then forgets the extra copies.
KEY_READ_LIMIT = 10

#: A step of an operation: the request it needs next. The generator receives the response.
Step: TypeAlias = Generator[_core.Call[Any], Any, Any]


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


def namespace_tag(prefix: Sequence[str]) -> str:
    """The tag every item under ``prefix`` carries (readable when it fits in a tag)."""
    joined = ".".join(prefix)
    readable = f"lg:{joined}"
    return readable if len(readable) <= TAG_MAX_CHARS else f"lg#{_digest(*prefix)[:40]}"


def key_tag(namespace: Sequence[str], key: str) -> str:
    """The tag that names one item: its namespace and key, hashed to a bounded length."""
    return f"lgk#{_digest(list(namespace), key)[:40]}"


def item_tags(namespace: Sequence[str], key: str, *, indexed: bool = True) -> list[str]:
    prefixes = [namespace_tag(namespace[:depth]) for depth in range(1, len(namespace) + 1)]
    return [ROOT_TAG, *prefixes, key_tag(namespace, key), *([] if indexed else [NOINDEX_TAG])]


def value_filter(
    tags: str | Mapping[str, Any], condition: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Engram's filter for the items ``tags`` selects (a tag, or Engram's tag operators)
    whose values match LangGraph's ``condition``: LangGraph's nested form is Engram's metadata
    form, two levels down."""
    narrowed: dict[str, Any] = {"tags": tags if isinstance(tags, str) else dict(tags)}
    if condition:
        narrowed["metadata"] = {METADATA_KEY: {"value": dict(condition)}}
    return narrowed


def _stored(memory: Memory) -> dict[str, Any] | None:
    """The store's record in a memory's metadata, or None for a memory it did not write."""
    record = memory.metadata.get(METADATA_KEY)
    if not isinstance(record, dict) or not isinstance(record.get("value"), dict):
        return None
    if not isinstance(record.get("namespace"), list) or not isinstance(record.get("key"), str):
        return None
    return record


def _item(memory: Memory, record: dict[str, Any]) -> Item:
    created = record.get("created_at")
    return Item(
        value=record["value"],
        key=record["key"],
        namespace=tuple(record["namespace"]),
        created_at=datetime.fromisoformat(created)
        if isinstance(created, str)
        else memory.created_at,
        updated_at=memory.created_at,
    )


def _search_item(memory: Memory, record: dict[str, Any], score: float | None) -> SearchItem:
    item = _item(memory, record)
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def _in_prefix(record: dict[str, Any], prefix: tuple[str, ...]) -> bool:
    return tuple(record["namespace"][: len(prefix)]) == prefix


def _matches_condition(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(want == "*" or got == want for got, want in pairs)


def _plan(ops: Iterable[Op]) -> tuple[list[tuple[int, Op]], list[PutOp], list[Result]]:
    """A batch split as LangGraph's stores run it: its reads (with their positions), then its
    puts, one per item (the last put of an item, at the place of its first), and a result slot
    per op (None for a put)."""
    reads: list[tuple[int, Op]] = []
    puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
    count = 0
    for index, op in enumerate(ops):
        count += 1
        if isinstance(op, PutOp):
            puts[(tuple(op.namespace), op.key)] = op
        else:
            reads.append((index, op))
    return reads, list(puts.values()), [None] * count


class EngramStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are the API key's long-term Engram memories.

    ``EngramStore()`` reads ``ENGRAM_API_URL`` / ``ENGRAM_API_KEY``; or pass ``client=`` (an
    ``Engram``) and/or ``async_client=`` (an ``AsyncEngram``) — the one not given is made with
    the same URL and key. ``project_id`` writes every item into that project and reads global
    ∪ that project; ``index`` is LangGraph's index configuration, of which the store reads
    ``fields`` (the default field paths an item's text is made of; ``index_fields`` says the
    same): Engram embeds on the server, with the tenant's model, so ``embed`` and ``dims`` are
    not used. ``search_mode`` is Engram's recall mode for searches with a query (default
    hybrid).
    """

    __slots__ = (
        "_async_client",
        "_client",
        "_owned",
        "index_config",
        "index_fields",
        "max_concurrency",
        "project_id",
        "search_mode",
        "search_pool",
        "text_max_chars",
    )

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: Engram | None = None,
        async_client: AsyncEngram | None = None,
        project_id: str | uuid.UUID | None = None,
        index: IndexConfig | None = None,
        index_fields: Sequence[str] | None = None,
        search_mode: Literal["semantic", "keyword", "hybrid"] | None = None,
        search_pool: int = DEFAULT_SEARCH_POOL,
        text_max_chars: int = DEFAULT_TEXT_MAX_CHARS,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        template = client or async_client
        if template is not None:
            base_url = base_url or template.options.base_url
            api_key = api_key or template.options.api_key
        self._owned: list[Engram | AsyncEngram] = []
        if client is None:
            client = Engram(base_url, api_key)
            self._owned.append(client)
        if async_client is None:
            async_client = AsyncEngram(base_url, api_key)
            self._owned.append(async_client)
        self._client = client
        self._async_client = async_client
        self.project_id = project_id
        self.index_config = index
        fields = index_fields or (index or {}).get("fields")
        self.index_fields = list(fields) if fields else None
        self.search_mode = search_mode
        self.search_pool = search_pool
        self.text_max_chars = text_max_chars
        self.max_concurrency = max_concurrency

    # ------------------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Close the clients this store made (not the ones passed in)."""
        for owned in self._owned:
            if isinstance(owned, Engram):
                owned.close()

    async def aclose(self) -> None:
        self.close()
        for owned in self._owned:
            if isinstance(owned, AsyncEngram):
                await owned.aclose()

    def __enter__(self) -> EngramStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------------- BaseStore

    @override
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch as LangGraph's own stores do; results in the order of ``ops``.

        Every read (get, search, list_namespaces) sees the items as they were before the
        batch's writes, the writes land after the reads, and of several puts of one item only
        the last is made.
        """
        reads, writes, results = _plan(ops)
        read_steps = [(index, self._step(op)) for index, op in reads]
        write_steps = [self._step(op) for op in writes]
        for index, step in read_steps:
            results[index] = self._run(step)
        for step in write_steps:
            self._run(step)
        return results

    @override
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch``, with the reads sent concurrently and then the writes (one per item), at
        most ``max_concurrency`` requests at a time."""
        reads, writes, results = _plan(ops)
        read_steps = [(index, self._step(op)) for index, op in reads]
        write_steps = [self._step(op) for op in writes]
        # Created here: a semaphore belongs to the loop that runs this batch.
        slots = asyncio.Semaphore(self.max_concurrency)

        async def bounded(step: Step) -> Any:
            async with slots:
                return await self._arun(step)

        answers = await asyncio.gather(*(bounded(step) for _index, step in read_steps))
        for (index, _step), answer in zip(read_steps, answers, strict=True):
            results[index] = answer
        await asyncio.gather(*(bounded(step) for step in write_steps))
        return results

    # ------------------------------------------------------------------------- driving

    # Each operation is written once, as a generator that yields the requests it needs and
    # receives their responses (or has their EngramError thrown in); ``_run`` sends them with
    # the sync client and ``_arun`` with the async one.

    def _run(self, step: Step) -> Any:
        try:
            call = next(step)
            while True:
                try:
                    response = self._client._send(call)
                except EngramError as error:
                    call = step.throw(error)
                else:
                    call = step.send(response)
        except StopIteration as done:
            return done.value

    async def _arun(self, step: Step) -> Any:
        try:
            call = next(step)
            while True:
                try:
                    response = await self._async_client._send(call)
                except EngramError as error:
                    call = step.throw(error)
                else:
                    call = step.send(response)
        except StopIteration as done:
            return done.value

    def _step(self, op: Op) -> Step:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"Unknown store operation: {type(op).__name__}")

    # ------------------------------------------------------------------------- operations

    def _list(
        self,
        *,
        tags: list[str] | None = None,
        narrowed: Mapping[str, Any] | None = None,
        limit: int,
        offset: int,
    ) -> Step:
        page = yield _core.list_memories(
            limit=limit,
            offset=offset,
            project_id=self.project_id,
            source=None,
            tags=tags,
            include_superseded=False,
            all_subjects=False,
            filter=narrowed,
        )
        return page

    def _memories_of_key(self, namespace: tuple[str, ...], key: str) -> Step:
        """The live memories holding ``(namespace, key)``, newest first (normally one)."""
        page = yield from self._list(tags=[key_tag(namespace, key)], limit=KEY_READ_LIMIT, offset=0)
        found: list[tuple[Memory, dict[str, Any]]] = []
        for memory in page.data:
            record = _stored(memory)
            if record and tuple(record["namespace"]) == namespace and record["key"] == key:
                found.append((memory, record))
        return found

    def _get(self, op: GetOp) -> Step:
        found = yield from self._memories_of_key(tuple(op.namespace), op.key)
        if not found:
            return None
        memory, record = found[0]
        return _item(memory, record)

    def _forget(self, memory_id: uuid.UUID) -> Step:
        with contextlib.suppress(NotFoundError):  # already gone: a concurrent delete won
            yield _core.forget(memory_id)

    def _put(self, op: PutOp) -> Step:
        namespace = tuple(op.namespace)
        if op.value is not None:
            if not namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if len(namespace) > MAX_NAMESPACE_DEPTH:
                raise InvalidNamespaceError(
                    f"Engram stores namespaces at most {MAX_NAMESPACE_DEPTH} labels deep."
                )
        found = yield from self._memories_of_key(namespace, op.key)
        for stale, _record in found[1:]:
            yield from self._forget(stale.id)
        if op.value is None:
            if found:
                yield from self._forget(found[0][0].id)
            return None
        value = dict(op.value)
        current = found[0] if found else None
        for _attempt in range(2):
            created_at = current[1].get("created_at") if current else None
            record = {
                "namespace": list(namespace),
                "key": op.key,
                "value": value,
                "created_at": created_at or datetime.now(UTC).isoformat(),
            }
            try:
                indexed = op.index is not False
                yield _core.remember(
                    self._text(value, op.index),
                    context=" ".join([*namespace, op.key]),
                    tags=item_tags(namespace, op.key, indexed=indexed),
                    metadata={METADATA_KEY: record},
                    project_id=self.project_id,
                    confidence=None,
                    supersedes=current[0].id if current else None,
                    # Read-your-writes by meaning: a search right after the put ranks it.
                    embed_now=indexed,
                )
                return None
            except (ConflictError, NotFoundError) as error:
                # Another put superseded (or a delete forgot) the version this one replaces.
                if current is None or (
                    isinstance(error, ConflictError) and error.code != "already_superseded"
                ):
                    raise
                latest = yield from self._memories_of_key(namespace, op.key)
                current = latest[0] if latest else None
        raise ConflictError("The item kept changing while it was written.", code="put_conflict")

    def _text(self, value: Mapping[str, Any], index: Literal[False] | list[str] | None) -> str:
        fields = index if isinstance(index, list) else self.index_fields
        parts: list[str] = []
        if fields:
            for path in fields:
                parts.extend(str(text) for text in get_text_at_path(value, path) if text)
        if not parts:
            for name in DEFAULT_TEXT_FIELDS:
                if isinstance(value.get(name), str) and value[name].strip():
                    parts.append(value[name])
                    break
        if not parts:
            parts.append(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
        return "\n".join(parts)[: self.text_max_chars]

    def _search(self, op: SearchOp) -> Step:
        prefix = tuple(op.namespace_prefix)
        tag = namespace_tag(prefix) if prefix else ROOT_TAG
        offset, limit = max(0, op.offset), max(0, op.limit)
        if op.query:
            wanted = min(offset + limit, self.search_pool)
            if wanted == 0:
                return []
            ranked = yield _core.recall(
                op.query,
                limit=wanted,
                project_id=self.project_id,
                include_superseded=False,
                mode=self.search_mode,
                filter=value_filter({"$all": [tag], "$nin": [NOINDEX_TAG]}, op.filter),
            )
            matches = self._items([(hit.memory, hit.score) for hit in ranked.hits], prefix)
            if len(matches) < wanted:
                # As InMemoryStore does, the items no query can rank (index=False) fill a
                # search that ranked fewer than it asked for.
                unranked = yield from self._listed(
                    value_filter({"$all": [tag, NOINDEX_TAG]}, op.filter),
                    prefix,
                    limit=wanted - len(matches),
                    offset=0,
                )
                matches += unranked
            return matches[offset:wanted]
        listed = yield from self._listed(
            value_filter(tag, op.filter), prefix, limit=limit, offset=offset
        )
        return listed

    def _items(
        self, memories: Iterable[tuple[Memory, float | None]], prefix: tuple[str, ...]
    ) -> list[SearchItem]:
        found = []
        for memory, score in memories:
            record = _stored(memory)
            if record is not None and _in_prefix(record, prefix):
                found.append(_search_item(memory, record, score))
        return found

    def _listed(
        self, narrowed: Mapping[str, Any], prefix: tuple[str, ...], *, limit: int, offset: int
    ) -> Step:
        """Up to ``limit`` items the server's filter keeps, newest first, from ``offset``."""
        matches: list[SearchItem] = []
        position = offset
        while len(matches) < limit:
            size = min(_core.MEMORY_PAGE_MAX, limit - len(matches))
            page = yield from self._list(narrowed=narrowed, limit=size, offset=position)
            matches += self._items([(memory, None) for memory in page.data], prefix)
            position += len(page.data)
            if not page.data or position >= page.meta.total_count:
                break
        return matches

    def _list_namespaces(self, op: ListNamespacesOp) -> Step:
        conditions = tuple(op.match_conditions or ())
        tag = ROOT_TAG
        for condition in conditions:
            if condition.match_type != "prefix":
                continue
            fixed: list[str] = []
            for label in condition.path:
                if label == "*":
                    break
                fixed.append(label)
            if fixed:
                tag = namespace_tag(fixed)
                break
        namespaces: set[tuple[str, ...]] = set()
        offset = 0
        while True:
            page = yield from self._list(tags=[tag], limit=_core.MEMORY_PAGE_MAX, offset=offset)
            for memory in page.data:
                record = _stored(memory)
                if record is not None:
                    namespaces.add(tuple(record["namespace"]))
            offset += len(page.data)
            if not page.data or offset >= page.meta.total_count:
                break
        kept = [ns for ns in namespaces if all(_matches_condition(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]
