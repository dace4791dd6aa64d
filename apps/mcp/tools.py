# length: one client call per tool; most lines are the descriptions agents choose by.
"""The agent tools: one client call each, described so an agent knows which layer to use.

Every tool talks to Engram's HTTP API through the Python client, :class:`engram_client.Engram`
(DESIGN §1: never the ORM; DESIGN §10: the one HTTP client). None takes a tenant or subject:
scope is whatever the API key says, so a cross-scope call cannot even be written down.
``project_id`` is the one caller-supplied scope, and it is a partition of the caller's own
memories, not an isolation boundary.

A successful call returns the API's JSON body (``{"data", "meta"}``) as both text and
structured content. An API error comes back as a tool error (``isError: true``) whose text
starts with the API's stable error code — ``quota_exceeded: …``, ``not_found: …``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from engram_client import (
    ArticleProposal,
    Engram,
    EngramConnectionError,
    EngramError,
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
    SessionTurn,
)
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

# The session tier's default lifetime when a caller names none (the stop hook's default too).
SESSION_TTL_SECONDS = 24 * 3600
BEARER_SCHEME = "bearer"
AUTHENTICATION_REQUIRED = "authentication_required"
#: What a caller over HTTP is told when its request carries no usable key.
AUTHENTICATION_REQUIRED_MESSAGE = (
    "This MCP server acts as the key each request carries: send Authorization: Bearer "
    "<your Engram API key>."
)

INSTRUCTIONS = """\
Engram is your long-term memory and your team's shared knowledge base. Pick the layer by \
ownership and lifecycle, not by where you will look for it later:

- Worth another agent reading (a pattern, decision, finding or reference)? -> knowledge_create. \
Shared with the whole tenant, curated, deduplicated by a novelty gate.
- A fact YOU learned about YOUR task or user that only you need to recall later? -> \
memory_remember. Private to you; no other agent can read it.
- Starting a task? -> recall_context once (your memories and the shared knowledge in one \
ranked list); afterwards report the knowledge you actually used with recall_referenced.
- Finishing a session? -> memory_promote with the session id (compiles the session's turns \
into durable memories; the engram-promote-hook does this for you when installed).
- A private memory that keeps proving useful deserves a durable article -> memory_graduate.
- Live operational state (a ticket, an order, a build) belongs to the system that owns it, \
not here.

Your tenant and subject come from your API key: no tool takes them, and nothing you pass can \
reach another agent's memory. project_id partitions your memories and the knowledge base by \
project: find it once with resolve_project. Never store secrets or regulated PII (memory text \
is sent to an embedding provider); store a pointer instead ("the deploy key is in the vault \
under prod/deploy").
"""


@dataclass(frozen=True)
class EngramState:
    """What every tool call shares: the client for the configured Engram API.

    With ``caller_keys`` (streamable HTTP) every call acts as the key its own request carried
    as ``Authorization: Bearer``, and a call that carried none is refused: the client's own key,
    if it has one, is never used. Without it (stdio, in-process) the client's key is used and
    request headers are not read.
    """

    engram: Engram
    caller_keys: bool = False


ToolContext = Context[EngramState, Any]


DataT = TypeVar("DataT")


class Envelope(BaseModel, Generic[DataT]):
    """A success body whose ``data`` the client models alone (``meta`` is then ``{}``)."""

    data: DataT
    meta: dict[str, Any]


class Forgotten(BaseModel):
    """``memory_forget``'s data: the API answers a bare 204."""

    id: uuid.UUID
    forgotten: Literal[True]


@dataclass(frozen=True)
class ToolSpec:
    fn: Callable[..., CallToolResult]
    annotations: ToolAnnotations
    #: The model of a successful call's structured content, published as its ``outputSchema``.
    output: type[BaseModel]


# ----------------------------------------------------------------------------- plumbing


def bearer_key(authorization: str | None) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header; None for any other or empty value."""
    if authorization is None:
        return None
    scheme, _, key = authorization.strip().partition(" ")
    if scheme.lower() != BEARER_SCHEME:
        return None
    return key.strip() or None


def _result(body: dict[str, Any]) -> CallToolResult:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


def tool_error(
    code: str, message: str, details: dict[str, Any], status: int | None = None
) -> CallToolResult:
    """A tool error whose text starts with a stable code: ``"<code>: <message> <details>"``."""
    text = f"{code}: {message}"
    if details:
        text += " " + json.dumps(details, ensure_ascii=False, separators=(",", ":"))
    envelope: dict[str, Any] = {"error": {"code": code, "message": message, "details": details}}
    if status is not None:
        envelope["status"] = status
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=envelope, is_error=True
    )


def _dump(outcome: Any) -> Any:
    if isinstance(outcome, BaseModel):
        # exclude_unset: exactly the fields the API sent, no client-side defaults added.
        return outcome.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(outcome, list):
        return [_dump(item) for item in outcome]
    return outcome


def _envelope(outcome: Any) -> dict[str, Any]:
    """The API body: responses the client models whole keep theirs, others get ``meta: {}``."""
    dumped = _dump(outcome)
    if isinstance(outcome, BaseModel) and {"data", "meta"} <= set(type(outcome).model_fields):
        return dict(dumped)
    return {"data": dumped, "meta": {}}


def _call(ctx: ToolContext, operation: Callable[[Engram], Any]) -> CallToolResult:
    """One client call; its body as the tool result, or its error envelope as a tool error."""
    state = ctx.request_context.lifespan_context
    engram = state.engram
    if state.caller_keys:
        key = bearer_key((ctx.headers or {}).get("authorization"))
        if key is None:
            return tool_error(AUTHENTICATION_REQUIRED, AUTHENTICATION_REQUIRED_MESSAGE, {})
        engram = engram.with_options(api_key=key)
    try:
        outcome = operation(engram)
    except EngramConnectionError as exc:
        return tool_error(exc.code, exc.message, exc.details)
    except EngramError as exc:
        return tool_error(exc.code, exc.message, exc.details, exc.status)
    return _result(_envelope(outcome))


# Parameter types shared by several tools. Body fields stay strings so the API's own stable
# codes (invalid_project_id, invalid_memory_id) reach the agent; ids that become part of a URL
# path are parsed as UUIDs here, so no argument can reshape the path.
ProjectId = Annotated[
    str | None,
    Field(
        description="Optional project partition (from resolve_project). Omit for global only; "
        "with it, reads see global + that project."
    ),
]
Query = Annotated[str, Field(description="What you are looking for, in words (1-500 chars).")]
Limit = Annotated[int | None, Field(description="How many results (server default if omitted).")]
AsOf = Annotated[
    str | None,
    Field(
        description="Optional ISO 8601 time (a date, or a date and time with its offset): "
        "read the memories that held then, superseded since or not. Omit for what holds now."
    ),
]
SessionId = Annotated[
    str | None,
    Field(
        description="Optional id of your current session (<= 200 bytes): articles already shown "
        "to this session are demoted in favour of unseen ones."
    ),
]
Tags = Annotated[list[str] | None, Field(description="Optional short labels (<= 64 chars each).")]
MemoryFilterArg = Annotated[
    dict[str, Any] | None,
    Field(
        description='Optional: only memories whose tags and metadata match, e.g. {"tags": '
        '{"$in": ["infra"]}, "metadata": {"kind": "decision", "score": {"$gte": 3}, "due": '
        '{"$lt": "2025-01-01"}}}. "tags": a tag or $all/$in/$nin/$eq/$ne; "metadata": fields '
        "as nested objects, each a value to equal or operators $eq/$ne/$in/$nin/$exists and "
        "$gt/$gte/$lt/$lte (numbers compare as numbers, ISO dates as dates, other strings "
        'in code-point order); "$and": a list of filters. A bad filter is invalid_filter.'
    ),
]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


# ----------------------------------------------------------------------------- memory


def memory_remember(
    ctx: ToolContext,
    text: Annotated[
        str,
        Field(description="The fact, in one self-contained sentence or paragraph (no secrets)."),
    ],
    tags: Tags = None,
    metadata: Annotated[
        dict[str, Any] | None, Field(description="Optional JSON object stored with the memory.")
    ] = None,
    project_id: ProjectId = None,
    supersedes: Annotated[
        str | None,
        Field(
            description="Id of one of your live memories this one corrects or replaces; the old "
            "one leaves recall but is kept."
        ),
    ] = None,
    valid_from: Annotated[
        str | None,
        Field(
            description='Optional ISO 8601 time the fact became true, if not now ("the user '
            'moved to Lisbon in March"). A newer value of the same thing (employer, city, '
            "diet, a setting) retires the older memory from that time on."
        ),
    ] = None,
    tier: Annotated[
        Literal["long_term", "session"],
        Field(
            description='"long_term" (default) saves a durable memory. "session" appends `text` '
            "as one turn of a session to short-term memory, for memory_promote to compile later."
        ),
    ] = "long_term",
    session_id: Annotated[
        str | None, Field(description='tier="session" only: the session the turn belongs to.')
    ] = None,
    role: Annotated[
        Literal["user", "assistant", "system", "fact"] | None,
        Field(description='tier="session" only: who said it (default "user").'),
    ] = None,
    ttl_seconds: Annotated[
        int | None,
        Field(description='tier="session" only: how long the turn lives (default 24 hours).'),
    ] = None,
) -> CallToolResult:
    """Save a PRIVATE fact to your own long-term memory.

    Use it for something you learned about YOUR task, YOUR user or your environment that only
    you need to recall in a later session: a preference, a decision, a gotcha. It is private to
    you (your key's subject); no other agent can read it. If the fact is worth another agent
    reading, use knowledge_create instead. To correct a memory, pass supersedes=<old id>; a
    new value of something you already remember (the user changed jobs, moved, went vegan)
    replaces the older memory on its own, and where Engram cannot tell which holds it keeps
    both and flags them (conflicts_with).
    Never store secrets or regulated PII: store a pointer to where the secret lives.
    A new memory is embedded in the background; it shows up in memory_recall once its
    embedding_status is "ready" (usually within seconds). Over your quota → quota_exceeded.
    With tier="session", appends one turn of your current session instead; memory_promote
    compiles those turns into long-term memories at the end of the session.
    """
    long_term_only = {
        "tags": tags,
        "project_id": project_id,
        "supersedes": supersedes,
        "valid_from": valid_from,
    }
    session_only = {"session_id": session_id, "role": role, "ttl_seconds": ttl_seconds}
    other_tier = "long_term" if tier == "session" else "session"
    misplaced = long_term_only if tier == "session" else session_only
    problems = {
        name: f'applies only to tier="{other_tier}"'
        for name, value in misplaced.items()
        if value is not None
    }
    if problems:
        message = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
        return tool_error("invalid_arguments", message, {"fields": problems})
    if tier == "session":
        # A missing session_id is sent blank, so the API's own validation error answers.
        return _call(
            ctx,
            lambda engram: engram.session_append(
                session_id or "",
                text,
                role=role or "user",
                metadata=metadata,
                ttl_seconds=ttl_seconds or SESSION_TTL_SECONDS,
            ),
        )
    return _call(
        ctx,
        lambda engram: engram.remember(
            text,
            tags=tags,
            metadata=metadata,
            project_id=project_id,
            supersedes=supersedes,
            valid_from=valid_from,
        ),
    )


def memory_recall(
    ctx: ToolContext,
    query: Query,
    project_id: ProjectId = None,
    limit: Limit = None,
    include_superseded: Annotated[
        bool, Field(description="Also return memories that were superseded.")
    ] = False,
    as_of: AsOf = None,
    filter: MemoryFilterArg = None,
) -> CallToolResult:
    """Search YOUR private long-term memories by meaning.

    Use it to prime yourself at the start of a task, or when you suspect you have learned
    something relevant before. Returns {memory, score, similarity, validity} hits, best first:
    global memories plus, with project_id, that project's. score only orders them; similarity
    is the cosine to the query, the value to judge relevance by. validity says whether a fact
    still holds ("current"), was replaced by a newer one ("superseded") or is contradicted by
    another memory Engram could not rank ("contested": check memory.conflicts_with). With
    as_of, you get what held at that time ("where did the user live last spring?").
    meta.fallback=true (score null) means embeddings were unavailable and a text match
    answered instead. With filter, only memories whose tags and metadata match are ranked
    (all of them can rank, not only the top hits). To search your memories AND the shared
    knowledge base in one call, prefer recall_context.
    """
    return _call(
        ctx,
        lambda engram: engram.recall(
            query,
            project_id=project_id,
            limit=limit,
            include_superseded=include_superseded,
            as_of=as_of,
            filter=filter,
        ),
    )


def memory_list(
    ctx: ToolContext,
    project_id: Annotated[
        str | None,
        Field(
            description="Global memories plus this project's (from resolve_project). Omit to "
            "list every partition."
        ),
    ] = None,
    source: Annotated[
        Literal["explicit", "promoted"] | None,
        Field(description='"explicit" (written with memory_remember) or "promoted" only.'),
    ] = None,
    include_superseded: Annotated[
        bool, Field(description="Also list memories that were superseded.")
    ] = False,
    limit: Annotated[int | None, Field(description="Page size (default 50).")] = None,
    offset: Annotated[int | None, Field(description="Rows to skip, for paging.")] = None,
    as_of: AsOf = None,
    all_subjects: Annotated[
        bool,
        Field(
            description="Operators only (a superadmin key with its tenant configured): list "
            "every subject's memories in that tenant. Ignored for any other key."
        ),
    ] = False,
    filter: MemoryFilterArg = None,
) -> CallToolResult:
    """List YOUR long-term memories, newest first, page by page.

    Use it to review what you have stored, e.g. before pruning with memory_forget.
    meta.total_count says how many there are. To find a memory by meaning, use memory_recall.
    An operator's superadmin key with all_subjects=true lists every subject of its
    impersonated tenant instead (oversight; memory_forget then deletes any of them).
    """
    return _call(
        ctx,
        lambda engram: engram.list_memories(
            project_id=project_id,
            source=source,
            include_superseded=include_superseded,
            all_subjects=all_subjects,
            limit=limit,
            offset=offset,
            as_of=as_of,
            filter=filter,
        ),
    )


def memory_forget(
    ctx: ToolContext,
    memory_id: Annotated[uuid.UUID, Field(description="The id of one of your memories.")],
) -> CallToolResult:
    """Permanently delete one of YOUR memories (and the older versions it superseded).

    The fact is gone everywhere: the article graduated from it is deleted, and promotion will
    not re-create it from the session it came from. Writing the same text again with
    memory_remember is allowed (you chose to know it again). Use it to prune a fact that is
    wrong or no longer true. To correct a fact instead, prefer memory_remember with
    supersedes=<id>, which keeps the history. An id that is not one of
    your memories is not_found. An operator's superadmin key (its tenant configured) may
    forget any memory of that tenant.
    """
    result = _call(ctx, lambda engram: engram.forget(memory_id))
    if result.is_error:
        return result
    return _result({"data": {"id": str(memory_id), "forgotten": True}, "meta": {}})


def memory_promote(
    ctx: ToolContext,
    session_id: Annotated[str, Field(description="The session to compile (<= 200 bytes).")],
) -> CallToolResult:
    """At the END of a session: compile its turns into durable long-term memories.

    The turns are the ones written with memory_remember tier="session" (or uploaded by the
    engram-promote-hook). Compilation runs in the background and only keeps confident, durable
    facts. Safe to call every time a session ends: data.reason is enqueued, already_queued,
    unchanged (nothing new since the last promotion; no work is done) or too_few_turns. Over
    your share of the hourly budget, or the tenant's → budget_exceeded.
    """
    return _call(ctx, lambda engram: engram.promote(session_id))


def memory_graduate(
    ctx: ToolContext,
    memory_id: Annotated[str, Field(description="The id of one of your long-term memories.")],
    re_scope: Annotated[
        Literal["global"] | None,
        Field(
            description='"global" turns a project memory into a tenant-wide article (first '
            "graduation only); omit to keep the memory's project."
        ),
    ] = None,
) -> CallToolResult:
    """Graduate one of YOUR long-term memories that has proven valuable into a knowledge article.

    Use it for a private fact you keep recalling and want in durable, curated form. It goes
    through the knowledge novelty gate: data.verdict is created, gated_to_draft (a near-duplicate
    kept as a draft), duplicate or deduplicated (the existing article; nothing written). The
    article stays visible to you only (owner visibility): graduation never shares a private
    memory. For knowledge meant for other agents, write it with knowledge_create. A memory that
    already graduated returns its article; re_scope="global" on an already-graduated project
    memory → already_graduated.
    """
    return _call(ctx, lambda engram: engram.graduate(memory_id, re_scope=re_scope))


# ----------------------------------------------------------------------------- merged recall


def recall_context(
    ctx: ToolContext,
    query: Query,
    project_id: ProjectId = None,
    limit: Limit = None,
    session_id: SessionId = None,
    as_of: AsOf = None,
) -> CallToolResult:
    """One call at the START of a task: your memories and the shared knowledge, merged.

    Returns one ranked list (each item tagged source "memory" or "knowledge") plus each
    source's own envelope. With project_id: global + that project. Pass your session_id so
    articles you were already shown this session make room for new ones. Keep meta.recall_id:
    when you have used some knowledge items, report them with recall_referenced. Memory items
    carry validity (current | superseded | contested) and, with as_of, are what held then.
    meta.answer_confidence (answer | weak | none) says whether the knowledge items answer the
    query; do not invent a score threshold.
    """
    return _call(
        ctx,
        lambda engram: engram.recall_context(
            query, project_id=project_id, limit=limit, session_id=session_id, as_of=as_of
        ),
    )


def recall_referenced(
    ctx: ToolContext,
    recall_id: Annotated[uuid.UUID, Field(description="meta.recall_id of that recall_context.")],
    article_ids: Annotated[
        list[str],
        Field(description='Ids of the items with source "knowledge" you used (at most 50).'),
    ],
) -> CallToolResult:
    """After recall_context: report which knowledge articles you actually used.

    Pass the ids of items whose source is "knowledge" (a memory's id is not an article). It is
    all-or-nothing: an id that this recall did not surface fails the whole call with
    not_surfaced and nothing is recorded. Repeating a report is harmless.
    """
    return _call(ctx, lambda engram: engram.referenced(recall_id, article_ids))


# ----------------------------------------------------------------------------- projects


def resolve_project(
    ctx: ToolContext,
    repo_url: Annotated[
        str | None,
        Field(
            description="The repository: git@host:owner/repo.git, https://host/owner/repo or "
            "bare owner/repo."
        ),
    ] = None,
    slug: Annotated[str | None, Field(description="The project's exact slug.")] = None,
    name: Annotated[str | None, Field(description="The project's name (case-insensitive).")] = None,
) -> CallToolResult:
    """Find the project_id for the repository or project you are working on.

    Call it once at the start of a task and pass data.id as project_id to memory_remember,
    memory_recall, recall_context, knowledge_search and knowledge_create, so project facts stay
    in their project. Precedence slug > repo_url > name. not_found if nothing matches,
    no_identifier if you pass none, ambiguous_resolution if several projects match.
    """
    return _call(
        ctx, lambda engram: engram.resolve_project(slug=slug, repo_url=repo_url, name=name)
    )


# ----------------------------------------------------------------------------- knowledge


def knowledge_search(
    ctx: ToolContext,
    query: Query,
    limit: Limit = None,
    project_id: ProjectId = None,
    session_id: SessionId = None,
) -> CallToolResult:
    """Search the tenant's SHARED knowledge base: curated patterns, decisions, findings.

    Full text and meaning combined; each result is a summary with a snippet and says why it was
    chosen (selection_reason). meta.answer_confidence (answer | weak | none) says whether the
    results answer the query. To search your own memories as well in one call, use
    recall_context.
    """
    return _call(
        ctx,
        lambda engram: engram.knowledge_search(
            query, limit=limit, project_id=project_id, session_id=session_id
        ),
    )


def knowledge_create(
    ctx: ToolContext,
    title: Annotated[str, Field(description="A unique, descriptive title.")],
    body: Annotated[str, Field(description="The article, in Markdown.")],
    category: Annotated[
        Literal["pattern", "decision", "finding", "reference"],
        Field(description="What kind of knowledge this is."),
    ],
    tags: Annotated[
        list[str] | None,
        Field(description='Optional labels; "alias:<phrase>" makes it the answer to <phrase>.'),
    ] = None,
    project_id: Annotated[
        str | None,
        Field(description="Optional project (from resolve_project); omit for tenant-wide."),
    ] = None,
    visibility: Annotated[
        Literal["tenant", "owner"],
        Field(description='"tenant" (default): every agent can read it. "owner": only you.'),
    ] = "tenant",
) -> CallToolResult:
    """Write knowledge WORTH ANOTHER AGENT READING into the shared knowledge base.

    Use it for a pattern, decision, finding or reference the whole tenant should be able to
    find. A novelty gate deduplicates: data.verdict is created (published), gated_to_draft (a
    near-duplicate, kept as a draft for review), duplicate or deduplicated (the existing
    article is returned; nothing written). A fact only you need belongs in memory_remember.
    A title another article holds → title_taken; embeddings down → gate_unavailable (retry).
    """
    return _call(
        ctx,
        lambda engram: engram.knowledge_create(
            title, body, category, tags=tags, project_id=project_id, visibility=visibility
        ),
    )


def knowledge_context(
    ctx: ToolContext,
    query: Annotated[
        str, Field(description="What you need to read about, in words (1-500 chars).")
    ],
    limit: Annotated[
        int | None, Field(description="How many top articles to return in full (default 3).")
    ] = None,
    project_id: ProjectId = None,
) -> CallToolResult:
    """The DEEP READ of the shared knowledge base: the top articles with their full bodies,
    plus the articles they link to (one hop).

    Use it after knowledge_search or recall_context when a summary is not enough and you need
    the articles themselves. Same query contract and meta as knowledge_search; linked
    articles are included only when you may read them.
    """
    return _call(
        ctx,
        lambda engram: engram.knowledge_context(query, limit=limit, project_id=project_id),
    )


FORGET = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
REPEATABLE_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(memory_remember, WRITE, Envelope[Memory | SessionTurn]),
    ToolSpec(memory_recall, READ, MemoryRecall),
    ToolSpec(memory_list, READ, MemoryPage),
    ToolSpec(memory_forget, FORGET, Envelope[Forgotten]),
    ToolSpec(memory_promote, REPEATABLE_WRITE, Envelope[PromotionResult]),
    ToolSpec(memory_graduate, WRITE, Envelope[GraduationResult]),
    ToolSpec(recall_context, READ, MergedRecall),
    ToolSpec(recall_referenced, REPEATABLE_WRITE, Envelope[RecallReferenced]),
    ToolSpec(resolve_project, READ, Envelope[Project]),
    ToolSpec(knowledge_search, READ, KnowledgeSearch),
    ToolSpec(knowledge_create, WRITE, Envelope[ArticleProposal]),
    ToolSpec(knowledge_context, READ, KnowledgeContext),
)
