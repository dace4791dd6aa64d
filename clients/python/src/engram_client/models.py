"""Typed responses: one pydantic model per schema component the client reads.

Each model mirrors the component named in :data:`SCHEMA_COMPONENTS`; Engram's test suite
compares the two field by field (names, required, nullable, types), so a server change that
is not reflected here fails CI. Unknown fields are kept (``extra="allow"``) so an older
client still reads a newer server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field


class EngramModel(BaseModel):
    model_config = ConfigDict(extra="allow")


# ----------------------------------------------------------------------------- memory


class Memory(EngramModel):
    """A long-term memory."""

    id: UUID
    subject_id: str
    text: str
    context: str
    tags: list[str]
    metadata: dict[str, Any]
    project_id: UUID | None
    source: str
    source_session_id: str
    confidence: float
    #: Valid time: when the fact became true, and when it stopped (null while it holds).
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: UUID | None
    superseded_at: datetime | None
    #: The memories this one replaced, and why (explicit, paraphrase, changed_value:<attr>).
    supersedes: list[UUID]
    supersede_reason: str
    #: Live memories stating another value for the same thing, undecided.
    conflicts_with: list[UUID]
    recall_count: int
    last_recalled_at: datetime | None
    embedding_status: str
    source_turn_seqs: list[int]
    compiler: str
    occurred_at: datetime
    created_at: datetime


class SessionTurn(EngramModel):
    """One turn of a session (the session tier), numbered by ``seq`` in append order."""

    seq: int
    session_id: str
    role: str
    content: str
    metadata: dict[str, Any]
    expires_at: datetime
    occurred_at: datetime
    created_at: datetime


class ListMeta(EngramModel):
    total_count: int
    limit: int
    offset: int


class MemoryPage(EngramModel):
    """One page of ``GET /memory`` (newest first)."""

    data: list[Memory]
    meta: ListMeta


class SessionHistoryMeta(ListMeta):
    #: Where the next page starts; None after the last. A page may hold fewer turns than its
    #: limit: it is bounded in turns and in bytes.
    next_offset: int | None


class SessionHistory(EngramModel):
    """One page of a session's turns, oldest first."""

    data: list[SessionTurn]
    meta: SessionHistoryMeta


class SessionCleared(EngramModel):
    """``DELETE /memory/sessions/{session_id}``: how many turns the clear deleted."""

    session_id: str
    deleted: int


class RecallHit(EngramModel):
    memory: Memory
    #: The mode's ranking score (hybrid: a fused rank, not a relevance); null when embeddings
    #: were unavailable and the keyword fallback answered.
    score: float | None
    #: Cosine similarity to the query whenever the query was embedded; null in keyword mode,
    #: on the fallback path, or for a memory without a vector. Threshold on this, not score.
    similarity: float | None
    #: ``keyword_pending``: found by its words before its embedding landed.
    selection_reason: str
    #: ``pending`` until the memory's embedding lands (only keyword recall finds it until then).
    embedding_status: Literal["ready", "pending"]
    #: Whether it still holds: ``current``, ``superseded`` (a newer memory replaced it) or
    #: ``contested`` (another live memory states a different value: ``conflicts_with``).
    validity: Literal["current", "superseded", "contested"]


class TimeWindow(EngramModel):
    """The time a recall's question named ("last spring"): what held or happened in it ranks
    first."""

    #: Inclusive start and exclusive end (null when open: "since May", "before 2022").
    start: datetime | None
    end: datetime | None
    #: The question's words it was read from.
    phrase: str
    #: How many hits were ranked first for it.
    preferred: int
    #: The memory that placed the event of an anchored window ("before the move"); None for a
    #: window named by time words.
    anchor: UUID | None


class MemoryRecallMeta(EngramModel):
    total_count: int
    fallback: bool
    reason: str | None
    underfilled: bool
    strategy: str
    ann_iterative_scan: str | None = None
    #: Why the iterative scan was ``unavailable`` (only then).
    ann_iterative_scan_reason: str | None = None
    mode: Literal["semantic", "keyword", "hybrid"]
    #: Why the primary answered, not the heavy-read replica (replica_lag, replica_unavailable).
    degraded_reason: str | None
    #: Rows in scope searched by their words only, their embedding still pending.
    pending_searched: int
    #: The valid time the recall ran at (null: now).
    as_of: datetime | None
    #: The time the question's words name, or null (none, or "currently").
    time_window: TimeWindow | None


class MemoryRecall(EngramModel):
    """``POST /memory/recall``: hits best first, and how the recall ran."""

    data: list[RecallHit]
    meta: MemoryRecallMeta

    @property
    def hits(self) -> list[RecallHit]:
        return self.data


class PromotionResult(EngramModel):
    session_id: str
    enqueued: bool
    reason: Literal["enqueued", "already_queued", "unchanged", "too_few_turns"]
    job_id: UUID | None


class GraduatedArticle(EngramModel):
    id: UUID
    title: str
    category: str
    status: str
    visibility: str
    project_id: UUID | None
    tags: list[str]


class GraduationResult(EngramModel):
    verdict: Literal["created", "gated_to_draft", "duplicate", "deduplicated"]
    created: bool
    article: GraduatedArticle


# ----------------------------------------------------------------------------- merged recall


class MergedRecallItem(EngramModel):
    source: Literal["memory", "knowledge"]
    id: UUID
    rank: int
    score: float | None
    #: Memory items: cosine similarity to the query (null without a vector or on fallback).
    similarity: float | None = None
    selection_reason: str
    tokens_estimate: int
    text: str | None = None
    embedding_status: Literal["ready", "pending"] | None = None
    #: Memory items: whether it still holds, its valid time and what replaced or contests it.
    validity: Literal["current", "superseded", "contested"] | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: UUID | None = None
    supersedes: list[UUID] | None = None
    supersede_reason: str | None = None
    conflicts_with: list[UUID] | None = None
    title: str | None = None
    snippet: str | None = None
    category: str | None = None
    tags: list[str]


class CandidatesConsidered(EngramModel):
    memory: int
    knowledge: int
    total: int


class MergedRecallMeta(EngramModel):
    recall_id: UUID
    results_ranking: str
    answer_confidence: Literal["answer", "weak", "none"]
    provenance: str | None
    confidence: float | None
    degraded: bool
    degraded_reason: str | None
    candidates_considered: CandidatesConsidered
    selected_count: int
    tokens_selected: int
    tokens_candidates: int
    tokens_saved_vs_candidates: int
    memory_count: int
    knowledge_count: int
    diversity: dict[str, Any] | None
    #: The memory half's valid time (null: now).
    as_of: datetime | None
    #: The memory half's time window (null: the question names none).
    time_window: TimeWindow | None


class MergedRecall(EngramModel):
    """``POST /recall``: memory ∪ knowledge in one ranked list, plus each half's envelope."""

    data: list[MergedRecallItem]
    memory: dict[str, Any]
    knowledge: dict[str, Any]
    meta: MergedRecallMeta

    @property
    def items(self) -> list[MergedRecallItem]:
        return self.data


class RecallReferenced(EngramModel):
    recall_id: UUID
    recorded: int


# ----------------------------------------------------------------------------- projects


class Project(EngramModel):
    id: UUID
    name: str
    slug: str
    repo_url: str
    status: str
    created_at: datetime
    updated_at: datetime


# ----------------------------------------------------------------------------- knowledge


class ArticleSummary(EngramModel):
    """An article without its body."""

    id: UUID
    title: str
    category: str
    tags: list[str]
    status: str
    visibility: str
    owner_agent_id: str
    source: str
    source_memory_id: UUID | None
    project_id: UUID | None
    version: int
    published_at: datetime | None
    embedding_status: str
    created_at: datetime
    updated_at: datetime


class Article(ArticleSummary):
    body: str


class ArticleProposal(EngramModel):
    """What the novelty gate decided about a new article."""

    verdict: Literal["created", "gated_to_draft", "duplicate", "deduplicated"]
    created: bool
    article: ArticleSummary


class KnowledgeSearchHit(EngramModel):
    id: UUID
    title: str
    category: str
    tags: list[str]
    score: float | None
    snippet: str
    selection_reason: str
    rank: int


class KnowledgeDiversityMeta(EngramModel):
    enabled: bool
    candidates: int
    selected: int
    vectors_available: int
    dropped_near_duplicates: int
    dropped_exact_duplicates: int
    dropped_already_seen: int
    readmitted_already_seen: int
    near_dup_threshold: float
    lambda_: float = Field(alias="lambda")


class KnowledgeSearchMeta(EngramModel):
    search_id: UUID
    total_count: int
    limit: int
    offset: int
    mode: str
    pool: int
    degraded: bool
    degraded_reason: str | None
    provenance: str
    confidence: float
    answer_confidence: Literal["answer", "weak", "none"]
    answer_separation: float | None
    keyword_mode: str
    ann_iterative_scan: str | None = None
    #: Why the iterative scan was ``unavailable`` (only then).
    ann_iterative_scan_reason: str | None = None
    diversity: KnowledgeDiversityMeta


class KnowledgeSearch(EngramModel):
    data: list[KnowledgeSearchHit]
    meta: KnowledgeSearchMeta

    @property
    def hits(self) -> list[KnowledgeSearchHit]:
        return self.data


class ArticleLink(EngramModel):
    kind: str
    direction: str
    article: ArticleSummary


class KnowledgeContextArticle(Article):
    score: float | None
    selection_reason: str
    links: list[ArticleLink]


class KnowledgeContextData(EngramModel):
    results: list[KnowledgeContextArticle]
    linked: list[Article]


class KnowledgeContext(EngramModel):
    """``POST /knowledge/context``: the top articles in full, plus the articles they link to."""

    data: KnowledgeContextData
    meta: dict[str, Any]


# ----------------------------------------------------------------------------- tenancy


class Whoami(EngramModel):
    tenant_id: UUID
    tenant_slug: str
    role: str
    subject_id: str
    agent_id: str
    impersonating: bool
    tenant_halted: bool


#: Which OpenAPI component (``manage.py spectacular``) each model mirrors.
SCHEMA_COMPONENTS: dict[type[EngramModel], str] = {
    Memory: "MemoryOutput",
    SessionTurn: "SessionTurnOutput",
    ListMeta: "ListMeta",
    MemoryPage: "MemoryListOutput",
    SessionHistory: "SessionHistoryOutput",
    SessionHistoryMeta: "SessionHistoryMeta",
    SessionCleared: "SessionClearData",
    RecallHit: "RecallHitOutput",
    TimeWindow: "TimeWindow",
    MemoryRecallMeta: "MemoryRecallMeta",
    MemoryRecall: "MemoryRecallOutput",
    PromotionResult: "MemoryPromoteData",
    GraduatedArticle: "GraduatedArticle",
    GraduationResult: "MemoryGraduateData",
    MergedRecallItem: "MergedRecallItem",
    CandidatesConsidered: "CandidatesConsidered",
    MergedRecallMeta: "MergedRecallMeta",
    MergedRecall: "MergedRecallOutput",
    RecallReferenced: "RecallReferencedData",
    Project: "ProjectOutput",
    ArticleSummary: "ArticleSummaryOutput",
    Article: "ArticleOutput",
    ArticleProposal: "ArticleProposalOutput",
    KnowledgeSearchHit: "KnowledgeSearchHitOutput",
    KnowledgeDiversityMeta: "KnowledgeDiversityMeta",
    KnowledgeSearchMeta: "KnowledgeSearchMeta",
    KnowledgeSearch: "KnowledgeSearchOutput",
    ArticleLink: "ArticleLinkOutput",
    KnowledgeContextArticle: "KnowledgeContextArticleOutput",
    KnowledgeContextData: "KnowledgeContextData",
    KnowledgeContext: "KnowledgeContextOutput",
    Whoami: "WhoamiData",
}
