"""Hybrid search: Postgres full text + vector kNN, fused by reciprocal rank, then diversified.

One query, two legs over the articles the viewer can see in the partition (global ∪ project):

* **keyword** — the stored ``search_vector`` (title weight A, body weight B) matched with
  ``websearch_to_tsquery``, ranked by ``ts_rank_cd``. A query without websearch operators
  (quotes, ``or``, ``-term``) matches ANY of its terms rather than all of them: agents ask
  questions in sentences, and requiring every word of a sentence finds almost nothing.
  Documents matching more terms still rank higher. Queries that use the operators get exact
  websearch semantics.
* **semantic** — cosine kNN on the article vectors: an exact scan for tenants with at most
  ``KNOWLEDGE_EXACT_SCAN_MAX_ROWS`` visible embedded articles, else pgvector's iterative
  HNSW scan over published articles plus an exact scan of the viewer's unpublished ones.

Fused by reciprocal rank (``1/(k + rank)`` summed over legs, k = ``KNOWLEDGE_RRF_K`` = 60) and
reported normalised to [0, 1] (1.0 = first in both legs). Embeddings unavailable or the
heavy-read pool shed → keyword only, ``selection_reason: keyword_fallback``,
``meta.degraded: true`` with ``meta.degraded_reason``; never a 500.

A curated article (title or ``alias:`` tag equal to the query) is the governed answer: it
is pinned first and ``meta.provenance`` is ``curated``. The diversity selector then picks from
the ranked window (:mod:`apps.knowledge.diversity`) in ``reorder`` mode (search: what it did
not pick is demoted behind the pool tail, so paging still partitions the pool) or ``reduce``
mode (merged recall: only the picks are returned).
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import OperationalError
from django.db.models import BinaryField, Func

from apps.core.db.routers import PRIMARY
from apps.core.heavy_read import HeavyReadShed
from apps.core.queries import validate_query_text
from apps.core.replica import heavy_read_bypass_reason
from apps.core.telemetry import emit
from apps.core.vectors import vector_from_wire
from apps.knowledge.diversity import Candidate, DiversityOptions, VectorLike, select
from apps.knowledge.exceptions import InvalidSessionId
from apps.knowledge.history import RecallHistory, ShownHistory
from apps.knowledge.models import (
    Article,
)
from apps.knowledge.selectors.confidence import answer_confidence
from apps.knowledge.selectors.retrieval import (
    Fused,
    Legs,
    curated_id,
    fuse,
    keyword_leg,
    run_legs,
    selection_reason_for,
    tsquery_for,
    visible_articles,
)
from apps.knowledge.viewer import Viewer
from apps.providers.embeddings import EmbeddingsUnavailable, normalise_text
from apps.providers.query_vectors import embed_query_cached, query_caller
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config, tenant_embedding_fingerprint

#: Degraded reason when the heavy-read repo fails (statement timeout, replica down).
HEAVY_READ_UNAVAILABLE_REASON = "heavy_read_unavailable"
MODE_REORDER = "reorder"
MODE_REDUCE = "reduce"
CURATED = "curated"
RETRIEVED = "retrieved"
#: Each leg fetches at least this many rows, so answer_confidence is measured on a pool of
#: the same size whatever limit the caller asked for.
CONFIDENCE_POOL = 20
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SearchHit:
    article: Article
    #: Normalised fused score in [0, 1]; None for an unscored (pinned, unretrieved) article.
    score: float | None
    selection_reason: str
    #: 1-based position in the whole reordered pool (page offset included).
    rank: int
    snippet: str
    #: Cosine similarity to the query, when the semantic leg retrieved the article.
    semantic_score: float | None
    embedding: VectorLike | None
    embedding_content_hash: str


@dataclass
class SearchResult:
    results: list[SearchHit]
    meta: dict[str, Any]
    search_id: uuid.UUID
    #: The shown-history the search read (``session_id`` or a caller's); serving the result
    #: marks its rows there (``knowledge_search_record``).
    history: ShownHistory | None = None


def validate_knowledge_query(query: object) -> str:
    """The shared query contract (``validate_query_text``), at ``KNOWLEDGE_QUERY_MAX_CHARS``."""
    return validate_query_text(query, max_chars=settings.KNOWLEDGE_QUERY_MAX_CHARS)


def validate_session_id(session_id: object) -> str | None:
    """Optional, opaque, client-chosen; a non-string or one over
    ``KNOWLEDGE_SESSION_ID_MAX_BYTES`` bytes is 422 ``invalid_session_id`` (never truncated:
    a truncated token would collide with every token sharing its prefix)."""
    if session_id is None:
        return None
    if not isinstance(session_id, str) or not session_id:
        raise InvalidSessionId("session_id must be a non-empty string.")
    if len(session_id.encode("utf-8")) > settings.KNOWLEDGE_SESSION_ID_MAX_BYTES:
        raise InvalidSessionId(
            f"session_id is longer than {settings.KNOWLEDGE_SESSION_ID_MAX_BYTES} bytes."
        )
    return session_id


def snippet_for(body: str, query: str) -> str:
    """A window of the body around the first query term it contains (else its start)."""
    text = normalise_text(body)
    width = settings.KNOWLEDGE_SNIPPET_CHARS
    lowered = text.lower()
    positions = [
        position
        for term in _WORD.findall(query.lower())
        if len(term) >= 3 and (position := lowered.find(term)) >= 0
    ]
    start = max(0, min(positions) - width // 4) if positions else 0
    snippet = text[start : start + width]
    if start > 0:
        snippet = "…" + snippet
    if start + width < len(text):
        snippet += "…"
    return snippet


def _vector_of(
    wire: bytes | memoryview | None, article_model: str, embedding_model: str
) -> np.ndarray[Any, Any] | None:
    # Diversification compares candidates' vectors with each other: one of another model
    # (not re-embedded yet) would compare as noise, so it takes part as a pending one does.
    if wire is None or article_model != embedding_model:
        return None
    return vector_from_wire(wire)


def _retrieve(
    *,
    tenant: Tenant,
    viewer: Viewer,
    project_id: uuid.UUID | None,
    query: str,
    fetch: int,
) -> tuple[Legs, str | None]:
    """Run both legs, degrading to keywords (and saying why) instead of failing."""
    degraded_reason: str | None = None
    vector: list[float] | None = None
    try:
        vector = embed_query_cached(
            tenant_embedding_config(tenant=tenant),
            query,
            caller=query_caller(tenant.pk, viewer.subject_id),
        )
    except EmbeddingsUnavailable as exc:
        degraded_reason = str(exc.reason)
    try:
        legs = run_legs(
            tenant=tenant,
            viewer=viewer,
            project_id=project_id,
            query=query,
            vector=vector,
            fetch=fetch,
        )
    except (HeavyReadShed, OperationalError) as exc:
        # Shed, or the heavy-read repo timed out or is unreachable: keyword only, on the OLTP
        # repo, and no kNN at all.
        degraded_reason = (
            exc.reason if isinstance(exc, HeavyReadShed) else HEAVY_READ_UNAVAILABLE_REASON
        )
        base = visible_articles(tenant=tenant, viewer=viewer, project_id=project_id, alias=PRIMARY)
        legs = Legs(
            keyword=keyword_leg(base, query, fetch),
            curated_id=curated_id(base, query),
            alias=PRIMARY,
        )
    return legs, degraded_reason if legs.semantic is None else None


def _candidates(
    *, tenant: Tenant, legs: Legs, fused: list[Fused], fetch: int
) -> tuple[list[Candidate[Fused]], dict[uuid.UUID, Article]]:
    """The ranked pool (curated answer pinned first) with each article's vector and hash,
    loaded in one query."""
    ranked = fused[:fetch]
    if legs.curated_id is not None:
        pinned = next(
            (entry for entry in fused if entry.article_id == legs.curated_id),
            Fused(article_id=legs.curated_id),
        )
        ranked = [pinned] + [e for e in ranked if e.article_id != legs.curated_id]
        ranked = ranked[: max(fetch, 1)]
    model = tenant_embedding_fingerprint(tenant=tenant)
    rows = list(
        Article.objects.using(legs.alias)
        .filter(tenant_id=tenant.pk, pk__in=[entry.article_id for entry in ranked])
        # The vector in its binary form: Django's field would parse the text form, a Python
        # float per dimension, for every candidate of every search.
        .defer("search_vector", "embedding")
        .annotate(
            embedding_wire=Func("embedding", function="vector_send", output_field=BinaryField())
        )
    )
    articles: dict[uuid.UUID, Article] = {row.pk: row for row in rows}
    vectors = {row.pk: _vector_of(row.embedding_wire, row.embedding_model, model) for row in rows}
    candidates = [
        Candidate(
            key=str(entry.article_id),
            item=entry,
            score=entry.fused,
            vector=vectors[entry.article_id],
            fingerprint=articles[entry.article_id].embedding_content_hash or None,
        )
        for entry in ranked
        if entry.article_id in articles
    ]
    return candidates, articles


def knowledge_search(
    *,
    tenant: Tenant,
    viewer: Viewer,
    query: object,
    limit: int = 10,
    offset: int = 0,
    project_id: uuid.UUID | None = None,
    session_id: object = None,
    history: ShownHistory | None = None,
    diversity: DiversityOptions | None = None,
    mode: str = MODE_REORDER,
    search_id: uuid.UUID | None = None,
) -> SearchResult:
    """Hybrid search over the articles ``viewer`` can see (see the module docstring).

    The query is validated before anything is embedded (422 ``invalid_query`` /
    ``query_too_long``; ``session_id`` → 422 ``invalid_session_id``). ``history`` (an object
    with ``seen(ids)``/``mark(ids)``) enables containment; without one, a ``session_id``
    builds the cache-backed :class:`RecallHistory`, and with neither there is no containment.
    ``mode="reorder"`` returns ``limit`` rows from ``offset`` of the reordered pool;
    ``mode="reduce"`` returns only the diversity picks (``offset`` ignored). Nothing is
    written: a caller serving the result records it with ``knowledge_search_record``
    (``surfaced`` events under ``search_id``, minted when not given, and the history mark).
    """
    started = time.perf_counter()
    query = validate_knowledge_query(query)
    session = validate_session_id(session_id)
    if mode not in (MODE_REORDER, MODE_REDUCE):
        raise ValueError(f"unknown search mode {mode!r}")
    limit = max(1, min(int(limit), settings.KNOWLEDGE_SEARCH_MAX_LIMIT))
    offset = max(0, int(offset)) if mode == MODE_REORDER else 0
    options = (diversity or DiversityOptions()).resolved()
    window = options.window(limit)
    fetch = max(window, min(offset + limit, options.max_pool)) if mode == MODE_REORDER else window
    search_id = search_id or uuid.uuid4()
    if history is None and session is not None:
        history = RecallHistory(
            tenant.pk, viewer.subject_id, session, settings.KNOWLEDGE_RECALL_HISTORY_TTL_SECONDS
        )

    # Each leg fetches at least CONFIDENCE_POOL rows so answer_confidence is measured alike.
    legs, degraded_reason = _retrieve(
        tenant=tenant,
        viewer=viewer,
        project_id=project_id,
        query=query,
        fetch=max(fetch, CONFIDENCE_POOL),
    )
    degraded = legs.semantic is None
    confidence_scores = (
        [similarity for _, similarity in legs.semantic]
        if legs.semantic is not None
        else [score for _, score in legs.keyword]
    )
    candidates, articles = _candidates(tenant=tenant, legs=legs, fused=fuse(legs), fetch=fetch)
    in_window = candidates[:window]
    seen = history.seen([c.key for c in in_window]) if history is not None else set()
    pinned = {str(legs.curated_id)} if legs.curated_id is not None else set()
    outcome = select(
        in_window,
        limit=limit,
        lambda_=options.lambda_,
        near_dup_threshold=options.near_dup_threshold,
        history_seen=seen,
        pinned=pinned,
        enabled=options.enabled,
    )
    if mode == MODE_REDUCE:
        page, first_rank = outcome.selected, 1
    else:
        ordered = outcome.selected + candidates[window:] + outcome.unpicked
        page, first_rank = ordered[offset : offset + limit], offset + 1

    results = []
    for position, candidate in enumerate(page):
        entry = candidate.item
        article = articles[entry.article_id]
        results.append(
            SearchHit(
                article=article,
                score=None if entry.fused is None else round(entry.fused, 6),
                selection_reason=selection_reason_for(entry, degraded=degraded),
                rank=first_rank + position,
                snippet=snippet_for(article.body, query),
                semantic_score=entry.semantic_score,
                embedding=candidate.vector,
                embedding_content_hash=article.embedding_content_hash,
            )
        )

    verdict = answer_confidence(scores=confidence_scores, curated=legs.curated_id is not None)
    scored = [c.score for c in candidates if c.score is not None]
    meta: dict[str, Any] = {
        "search_id": str(search_id),
        "total_count": len(results),
        "limit": limit,
        "offset": offset,
        "mode": mode,
        "pool": len(candidates),
        "degraded": degraded,
        # Also set when the replica was bypassed (lagging or down): results are complete.
        "degraded_reason": degraded_reason or heavy_read_bypass_reason(),
        "provenance": CURATED if legs.curated_id is not None else RETRIEVED,
        "confidence": round(max(scored), 6) if scored else 0.0,
        "answer_confidence": verdict.verdict,
        "answer_separation": verdict.separation,
        "keyword_mode": tsquery_for(query)[1],
        "diversity": outcome.meta,
    }
    meta.update(legs.ann_iterative_scan)
    emit(
        "knowledge_search.completed",
        {
            "results": len(results),
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
        },
        {"tenant_id": str(tenant.pk), "degraded_reason": meta["degraded_reason"], "mode": mode},
    )
    return SearchResult(results=results, meta=meta, search_id=search_id, history=history)
