"""Recall: the subject's own memories ranked by meaning, index-safe and never underfilled.

One entry point, :func:`memory_recall`, and one module per ranking:

* :mod:`.semantic` — the vector ranking: an exact scan of the subject's rows up to
  ``MEMORY_EXACT_SCAN_MAX_ROWS``, iterative HNSW completed exactly above it;
* :mod:`.keyword` — Okapi BM25 in SQL over the subject's postings;
* :mod:`.hybrid` — the default: both rankings fused by their normalised scores;
* :mod:`.fallback` — embeddings unavailable or the heavy-read repo shed/failing: the keyword
  ranking on the OLTP repo, topped up by a recent-first substring match;
* :mod:`.scope` — the guarded (tenant, subject) predicate every statement is built around,
  compiled once per query shape, and the server-bound statement runner;
* :mod:`.windows` — the time a question names ("last spring"): what held or happened then
  ranked first.

Modes (docs/memory.md, "Recall modes"; LoCoMo figures in docs/benchmarks/locomo.md):
``semantic``, ``keyword``, ``hybrid`` (both legs fused by their normalised scores). Each hit
carries a ``selection_reason`` (``semantic`` | ``keyword`` | ``keyword+semantic`` |
``keyword_fallback`` | ``ilike_fallback`` | ``keyword_pending``: found by its words before its
embedding landed).
"""

from __future__ import annotations

import functools
import uuid
from concurrent.futures import Future
from datetime import UTC, datetime

from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from apps.core.db.filters import RecordFilter
from apps.core.exceptions import ValidationFailed
from apps.core.heavy_read import HeavyReadShed, heavy_read_slot
from apps.core.queries import validate_query_text
from apps.core.replica import heavy_read_bypass_reason
from apps.extraction.state_questions import (
    asks_current_state,
    asks_in_present,
    asks_what_used_to_be,
    names_in,
)
from apps.extraction.time_words import event_anchor, time_window
from apps.memory.selectors.recall.fallback import fallback_recall
from apps.memory.selectors.recall.hybrid import hybrid_recall
from apps.memory.selectors.recall.keyword import keyword_recall
from apps.memory.selectors.recall.recency import LaterFirst, same_fact_pairs
from apps.memory.selectors.recall.results import (
    EMBEDDING_STATUSES,
    HEAVY_READ_UNAVAILABLE,
    MODE_KEYWORD,
    MODE_SEMANTIC,
    RECALL_MODES,
    RECALL_SELECTION_REASONS,
    VALIDITIES,
    RecallHit,
    RecallResult,
    memory_validity,
    prefer_current,
    replaced_first,
)
from apps.memory.selectors.recall.semantic import semantic_recall
from apps.memory.selectors.recall.windows import (
    event_window,
    prefer_window,
    window_meta,
    window_narrowing,
    window_until,
)
from apps.providers.embeddings import EmbeddingsUnavailable
from apps.providers.query_vectors import (
    embed_query_cached,
    embed_query_soon,
    query_caller,
    ready,
)
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config

__all__ = [
    "EMBEDDING_STATUSES",
    "RECALL_MODES",
    "RECALL_SELECTION_REASONS",
    "VALIDITIES",
    "RecallHit",
    "RecallResult",
    "memory_recall",
    "memory_validity",
    "timestamp_text",
    "validate_recall_mode",
    "validate_recall_query",
]


def timestamp_text(value: datetime) -> str:
    """A timestamp as the API renders one: ISO 8601 in UTC, ``Z``."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def validate_recall_query(query: object) -> str:
    """The shared query contract (``validate_query_text``), at ``MEMORY_QUERY_MAX_CHARS``."""
    return validate_query_text(query, max_chars=settings.MEMORY_QUERY_MAX_CHARS)


def validate_recall_mode(mode: object) -> str:
    if mode is None:
        return str(settings.MEMORY_RECALL_DEFAULT_MODE)
    if mode not in RECALL_MODES:
        raise ValidationFailed(
            f"mode must be one of {', '.join(RECALL_MODES)}.", details={"mode": str(mode)}
        )
    return str(mode)


def memory_recall(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None = None,
    limit: int = 10,
    include_superseded: bool = False,
    query_embedding: list[float] | None = None,
    mode: str | None = None,
    as_of: datetime | None = None,
    narrowing: RecordFilter | None = None,
) -> RecallResult:
    """The subject's top-``limit`` memories for ``query`` (spec envelope ``{results, meta}``).

    ``as_of``: the memories whose fact held at that time (valid time: ``valid_from`` ≤ as_of <
    ``valid_to``), superseded since or not, ranked as usual; the filter is part of the guarded
    scope every statement runs, so the top-``limit`` is taken among them. Without it, the live
    memories (every version with ``include_superseded``), what still holds first
    (:func:`~apps.memory.selectors.recall.results.prefer_current`).

    ``narrowing``: a tag and metadata filter (:func:`~apps.core.db.filters.
    record_filter_parse`), part of the same guarded scope in every mode and on the fallback
    path, so the top-``limit`` is taken among the rows it keeps.

    ``mode`` is ``semantic`` | ``keyword`` | ``hybrid`` (default ``MEMORY_RECALL_DEFAULT_MODE``).
    ``query_embedding`` lets a caller that already embedded the query reuse it; otherwise the
    query is embedded on the query pool while the keyword leg runs, through the caller's
    query-vector cache (:mod:`apps.providers.query_vectors`).
    ``meta.degraded_reason`` names why the primary served what the heavy-read replica should
    have (``replica_lag``, ``replica_unavailable``), else null.

    Time words in ``query`` ("last spring", "in May 2023", "two weeks ago"; relative to
    ``as_of``, else now) name a window, and the memories that held or happened in it rank
    first, superseded since or not (:mod:`.windows`); a window nothing falls in changes
    nothing. So does an event ("before the move"): the subject's memory of it, found by its
    words, places the window's end or start. ``meta.time_window`` reports it, or null.
    """
    query = validate_recall_query(query)
    mode = validate_recall_mode(mode)
    limit = max(1, min(int(limit), settings.MEMORY_RECALL_MAX_LIMIT))
    read = functools.partial(
        _ranked,
        tenant=tenant,
        subject_id=subject_id,
        query=query,
        project_id=project_id,
        limit=limit,
        query_embedding=query_embedding,
        mode=mode,
        as_of=as_of,
    )
    window, anchor, event = None, None, None
    if settings.MEMORY_RECALL_TIME_WORDS:
        window = time_window(query, reference=timezone.now() if as_of is None else as_of)
        event = event_anchor(query) if window is None else None
    # "Where did Maria use to work?": every version, and what was replaced above what replaced
    # it. A time or an event in the question already reads every version that held then, and
    # keeps the ranking's order (the later of two similar memories is another event there).
    timeless = window is None and event is None
    used_to = timeless and as_of is None and asks_what_used_to_be(query)
    # At ``as_of`` every hit held (the scope says so): one superseded since is no less true then.
    result = read(
        include_superseded=include_superseded or used_to,
        narrowing=narrowing,
        later_first=_later_first(query) if timeless and not used_to else None,
        superseded_last=as_of is None and not used_to,
    )
    if used_to:
        result.results = replaced_first(result.results)
    if event is not None:
        # The event's own memory, found as any memory is: every version, same scope.
        found = read(
            query=event.event,
            query_embedding=None,
            limit=1,
            include_superseded=True,
            narrowing=narrowing,
            superseded_last=False,
        )
        window, anchor = event_window(event, found.results) or (None, None)
    preferred = 0
    if window is not None and as_of is not None:
        window = window_until(window, as_of)
    if window is not None:
        # Every version that held in the window: what was true then is what the question asks
        # for, so a fact superseded since does not go last. The window stands in for as_of's
        # valid-time filter ("as of December, where did she work last spring?" asks about a
        # job that had ended by December), and ends at as_of.
        within = read(
            include_superseded=True,
            narrowing=window_narrowing(window, narrowing, anchor),
            superseded_last=False,
            as_of=None,
        )
        result = prefer_window(result, within, limit)
        preferred = min(len(within.results), limit, settings.MEMORY_RECALL_TIME_WINDOW_FIRST)
    result.meta["degraded_reason"] = heavy_read_bypass_reason()
    result.meta["as_of"] = None if as_of is None else timestamp_text(as_of)
    result.meta["time_window"] = window_meta(window, preferred, anchor)
    return result


def _later_first(query: str) -> LaterFirst | None:
    """Which pairs of hits the question puts later first: any two that tell one fact for a
    question about how things stand now; for a question merely in the present ("Which editor
    do I use?", as often about a habit) only where the later says the thing changed
    ("switched to VS Code"); none for any other."""
    if asks_current_state(query):
        return LaterFirst.SAME_FACT
    if asks_in_present(query):
        return LaterFirst.CHANGED
    return None


def _ranked(
    *,
    tenant: Tenant,
    subject_id: str,
    query: str,
    project_id: uuid.UUID | None,
    limit: int,
    include_superseded: bool,
    query_embedding: list[float] | None,
    mode: str,
    as_of: datetime | None,
    narrowing: RecordFilter | None,
    superseded_last: bool = True,
    later_first: LaterFirst | None = None,
) -> RecallResult:
    """One ranking of the scope in ``mode``, degraded to the keyword fallback when it must,
    what still holds first (:func:`prefer_current`; a superseded hit last unless not
    ``superseded_last``; with ``later_first``, of two hits that tell one fact the later)."""
    degrade = functools.partial(
        fallback_recall,
        tenant=tenant,
        subject_id=subject_id,
        query=query,
        project_id=project_id,
        limit=limit,
        mode=mode,
        as_of=as_of,
        narrowing=narrowing,
    )
    vector: Future[list[float]] | None = None
    result: RecallResult | None = None
    try:
        if mode == MODE_KEYWORD:
            vector = None
        elif query_embedding is not None:
            vector = ready(query_embedding)
        else:
            config = tenant_embedding_config(tenant=tenant)
            caller = query_caller(tenant.pk, subject_id)
            # Hybrid starts the embedding now and runs the keyword leg's SQL meanwhile;
            # semantic has nothing to overlap, so it embeds here without a thread hop.
            vector = (
                embed_query_soon(config, query, caller=caller)
                if mode != MODE_SEMANTIC
                else ready(embed_query_cached(config, query, caller=caller))
            )
        with heavy_read_slot(tenant_id=tenant.pk, subject_id=subject_id):
            if mode == MODE_SEMANTIC:
                assert vector is not None  # noqa: S101 - every mode but keyword has one
                result = semantic_recall(
                    tenant=tenant,
                    subject_id=subject_id,
                    vector=vector.result(),
                    project_id=project_id,
                    limit=limit,
                    include_superseded=include_superseded,
                    as_of=as_of,
                    narrowing=narrowing,
                )
            elif mode == MODE_KEYWORD:
                result = keyword_recall(
                    tenant=tenant,
                    subject_id=subject_id,
                    query=query,
                    project_id=project_id,
                    limit=limit,
                    include_superseded=include_superseded,
                    as_of=as_of,
                    narrowing=narrowing,
                )
            else:
                assert vector is not None  # noqa: S101 - every mode but keyword has one
                result = hybrid_recall(
                    tenant=tenant,
                    subject_id=subject_id,
                    query=query,
                    vector=vector,
                    project_id=project_id,
                    limit=limit,
                    include_superseded=include_superseded,
                    as_of=as_of,
                    narrowing=narrowing,
                )
        result.meta["mode"] = mode
    except EmbeddingsUnavailable as exc:
        result = degrade(reason=exc.reason)
    except (HeavyReadShed, OperationalError) as exc:
        # Shed, or the heavy-read repo timed out or is unreachable: answer from the OLTP repo.
        result = degrade(
            reason=exc.reason if isinstance(exc, HeavyReadShed) else HEAVY_READ_UNAVAILABLE
        )
    result.results = prefer_current(
        result.results,
        _same_fact(tenant, subject_id, result, names_in(query), later_first)
        if later_first is not None
        else set(),
        superseded_last=superseded_last,
    )
    return result


def _same_fact(
    tenant: Tenant,
    subject_id: str,
    result: RecallResult,
    names: tuple[str, ...],
    later_first: LaterFirst,
) -> set[frozenset[uuid.UUID]]:
    """The hits that say nearly the same thing of the question's ``names`` (:mod:`.recency`);
    none on the fallback path, or when the heavy-read repo cannot be read (the order then
    stands as ranked)."""
    if result.meta.get("fallback"):
        return set()
    try:
        return same_fact_pairs(
            tenant=tenant,
            subject_id=subject_id,
            hits=result.results,
            names=names,
            changed_only=later_first is LaterFirst.CHANGED,
        )
    except OperationalError:
        return set()
