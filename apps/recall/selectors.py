"""Merged recall (spec "Merged recall", "The selection ledger"): one call returning the
caller's long-term memories ∪ the knowledge it may read, diversity-selected on the knowledge
half, merged in a deterministic order, with a ledger that explains the selection.

Each half runs through its own app's selector, so isolation, project partition, degradation
and the heavy-read guard are exactly theirs. If one half fails or degrades, the other is still
returned and ``meta.degraded`` says why — never a 500.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.core.db.filters import RecordFilter
from apps.core.exceptions import ApplicationError
from apps.core.replica import heavy_read_bypass_reason
from apps.core.tokens import estimate_tokens
from apps.knowledge.diversity import DiversityOptions
from apps.knowledge.selectors import (
    MODE_REDUCE,
    SearchResult,
    knowledge_search,
    validate_knowledge_query,
    validate_session_id,
)
from apps.knowledge.viewer import Viewer
from apps.memory.selectors import RecallResult, memory_recall, timestamp_text
from apps.tenancy.scope import RequestScope

logger = logging.getLogger(__name__)

RESULTS_RANKING = "heuristic_cross_source"
SOURCE_ORDER = {"knowledge": 0, "memory": 1}  # ties: knowledge before memory


@dataclass
class MergedRecall:
    recall_id: uuid.UUID
    data: list[dict[str, Any]]
    memory: dict[str, Any]
    knowledge: dict[str, Any]
    meta: dict[str, Any]
    #: The two halves as read (None when a half failed); serving the merge records them
    #: (apps.recall.services.recall_context_record).
    memory_result: RecallResult | None = None
    knowledge_result: SearchResult | None = None


def _memory_item(hit: Any) -> dict[str, Any]:
    memory = hit.memory
    # The memory selector says which ranking picked the row (semantic, keyword, both, or a
    # fallback); merged recall reports it as is.
    reason = hit.selection_reason
    # Only stable fields: recall_count and last_recalled_at change on every recall, and the
    # merged `data` array must be byte-identical for an unchanged corpus.
    return {
        "source": "memory",
        "id": str(memory.pk),
        "text": memory.text,
        "tags": list(memory.tags),
        "project_id": str(memory.project_id) if memory.project_id else None,
        "memory_source": memory.source,
        "created_at": memory.created_at.isoformat(),
        "score": None if hit.score is None else round(hit.score, 6),
        "similarity": None if hit.similarity is None else round(hit.similarity, 6),
        "selection_reason": reason,
        "embedding_status": hit.embedding_status,
        "tokens_estimate": estimate_tokens(memory.text),
        # Whether the fact still holds, and what replaced or contests it: the ledger says
        # why a memory is (or is not) the current value.
        "validity": hit.validity,
        "valid_from": timestamp_text(memory.valid_from),
        "valid_to": None if memory.valid_to is None else timestamp_text(memory.valid_to),
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
        "supersedes": [str(pk) for pk in memory.supersedes],
        "supersede_reason": memory.supersede_reason,
        "conflicts_with": [str(pk) for pk in memory.conflicts_with],
    }


def _knowledge_item(hit: Any) -> dict[str, Any]:
    article = hit.article
    return {
        "source": "knowledge",
        "id": str(article.pk),
        "title": article.title,
        "category": article.category,
        "tags": list(article.tags),
        "snippet": hit.snippet,
        "score": hit.score,
        "selection_reason": hit.selection_reason,
        "tokens_estimate": estimate_tokens(f"{article.title}\n{hit.snippet}"),
    }


def _order_key(item: dict[str, Any]) -> tuple[float, int, str]:
    score = item["score"]
    # Unscored rows (text fallback, pinned-but-unretrieved) sort after every scored one.
    ordered_score = -score if score is not None else float("inf")
    return (ordered_score, SOURCE_ORDER[item["source"]], item["id"])


def _memory_half(
    scope: RequestScope,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    as_of: datetime | None,
    memory_filter: RecordFilter | None,
) -> tuple[RecallResult | None, str | None]:
    try:
        result = memory_recall(
            tenant=scope.tenant,
            subject_id=scope.subject_id,
            query=query,
            project_id=project_id,
            limit=limit,
            as_of=as_of,
            narrowing=memory_filter,
        )
    except ApplicationError:
        raise
    except Exception:
        logger.exception("merged recall: memory half failed")
        return None, "memory_error"
    if result.meta.get("fallback"):
        return result, f"memory_fallback:{result.meta.get('reason')}"
    return result, None


def _knowledge_half(
    scope: RequestScope,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    session_id: str | None,
    recall_id: uuid.UUID,
    diversity: DiversityOptions | None,
) -> tuple[SearchResult | None, str | None]:
    try:
        result = knowledge_search(
            tenant=scope.tenant,
            viewer=Viewer.from_scope(scope),
            query=query,
            limit=limit,
            project_id=project_id,
            session_id=session_id,
            diversity=diversity,
            mode=MODE_REDUCE,
            search_id=recall_id,
        )
    except ApplicationError:
        raise
    except Exception:
        logger.exception("merged recall: knowledge half failed")
        return None, "knowledge_error"
    if result.meta.get("degraded"):
        return result, f"knowledge_keyword_only:{result.meta.get('degraded_reason')}"
    return result, None


def recall_context(
    *,
    scope: RequestScope,
    query: object,
    project_id: uuid.UUID | None = None,
    limit: int | None = None,
    session_id: object = None,
    diversity: DiversityOptions | None = None,
    as_of: datetime | None = None,
    memory_filter: RecordFilter | None = None,
) -> MergedRecall:
    """Memory ∪ knowledge for ``query``, merged and ledgered (see the module docstring).

    ``as_of`` reads the memory half at that valid time (:func:`memory_recall`); knowledge
    articles have no valid time and are searched as they are now. ``memory_filter`` narrows
    the memory half (tags and metadata, inside its scope); knowledge is not filtered.

    Validation happens before anything is embedded: ``invalid_query``, ``query_too_long``,
    ``invalid_session_id`` (non-string or over 200 bytes).
    """
    text = validate_knowledge_query(query)
    session = validate_session_id(session_id)
    limit = max(1, min(int(limit or settings.RECALL_DEFAULT_LIMIT), settings.RECALL_MAX_LIMIT))
    recall_id = uuid.uuid4()

    memory_result, memory_degraded = _memory_half(
        scope, text, project_id, limit, as_of, memory_filter
    )
    knowledge_result, knowledge_degraded = _knowledge_half(
        scope, text, project_id, limit, session, recall_id, diversity
    )

    memory_items = [_memory_item(hit) for hit in memory_result.results] if memory_result else []
    knowledge_items = (
        [_knowledge_item(hit) for hit in knowledge_result.results] if knowledge_result else []
    )
    # Every row here was on offer: the knowledge half has already dropped what diversity
    # ruled out, so the token figures are over what the merged cap could have handed out.
    on_offer = sorted(memory_items + knowledge_items, key=_order_key)
    data = on_offer[:limit]
    for rank, item in enumerate(data, start=1):
        item["rank"] = rank
    tokens_selected = sum(item["tokens_estimate"] for item in data)
    tokens_candidates = sum(item["tokens_estimate"] for item in on_offer)
    knowledge_meta = knowledge_result.meta if knowledge_result else {}
    knowledge_pool = int(knowledge_meta.get("pool", 0))
    reasons = [reason for reason in (memory_degraded, knowledge_degraded) if reason]
    meta: dict[str, Any] = {
        "recall_id": str(recall_id),
        "results_ranking": RESULTS_RANKING,
        "answer_confidence": knowledge_meta.get("answer_confidence", "none"),
        "provenance": knowledge_meta.get("provenance"),
        "confidence": knowledge_meta.get("confidence"),
        "degraded": bool(reasons),
        "degraded_reason": "; ".join(reasons) if reasons else heavy_read_bypass_reason(),
        "limit": limit,
        "memory_count": len(memory_items),
        "knowledge_count": len(knowledge_items),
        "candidates_considered": {
            "memory": len(memory_items),
            "knowledge": knowledge_pool,
            "total": len(memory_items) + knowledge_pool,
        },
        "selected_count": len(data),
        "tokens_selected": tokens_selected,
        "tokens_candidates": tokens_candidates,
        "tokens_saved_vs_candidates": tokens_candidates - tokens_selected,
        "diversity": knowledge_meta.get("diversity"),
        "as_of": None if as_of is None else timestamp_text(as_of),
        # The memory half's reading of the question's time words (knowledge has no valid time).
        "time_window": memory_result.meta.get("time_window") if memory_result else None,
    }
    return MergedRecall(
        recall_id=recall_id,
        data=data,
        memory=_memory_envelope(memory_result),
        knowledge=_knowledge_envelope(knowledge_result, limit),
        meta=meta,
        memory_result=memory_result,
        knowledge_result=knowledge_result,
    )


def _memory_envelope(result: RecallResult | None) -> dict[str, Any]:
    if result is None:
        return {"results": [], "meta": {"error": True}}
    return {
        "results": [{"memory": _memory_item(hit), "score": hit.score} for hit in result.results],
        "meta": result.meta,
    }


def _knowledge_envelope(result: SearchResult | None, limit: int) -> dict[str, Any]:
    if result is None:
        return {"results": [], "meta": {"error": True, "limit": limit}}
    return {
        "results": [
            {
                "id": str(hit.article.pk),
                "title": hit.article.title,
                "category": hit.article.category,
                "tags": list(hit.article.tags),
                "score": hit.score,
                "snippet": hit.snippet,
                "selection_reason": hit.selection_reason,
                "rank": hit.rank,
            }
            for hit in result.results
        ],
        "meta": {**result.meta, "limit": limit},
    }
