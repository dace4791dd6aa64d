"""Late interaction over ``hybrid``'s fused head: the top ``MEMORY_RECALL_RERANK_CANDIDATES``
of the fused ranking re-ordered by a blend of their fused score and how well each query
token finds a close token in the memory's text (MaxSim, :mod:`apps.providers.token_vectors`).

A bi-encoder squeezes a turn into one vector, and BM25 matches only exact stems; token by
token, a question's "painted" still finds a turn's "painting". The blend is
``w · maxsim' + (1 − w) · fused``, ``w`` = ``MEMORY_RECALL_RERANK_WEIGHT``, MaxSim min-max
normalised over the head (the fused score already is, over each leg): 1.0 still means "best
on every signal". MaxSim scores that spread less than ``MEMORY_RECALL_RERANK_CONFIDENT_SPREAD``
over the head count in proportion to their spread, so a few near-equal matches do not
overturn the fused order. The rest of the ranking keeps its order with ``(1 − w) · fused``, which no
head member scores below, so the order is the same whatever the limit. Runs only when the
deployment embeds with a local model whose token table is known (otherwise, or with 0
candidates, the fused order stands).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence

from cachetools import LRUCache
from django.conf import settings

from apps.memory.selectors.recall.scope import CompiledScope, fetch_values, quote
from apps.providers import token_vectors

#: Recent heads' texts per process, by memory id (a memory's text never changes once written):
#: the same memories come back in the head query after query. Only ids a scoped ranking of this
#: recall returned are looked up, so the cache answers nothing the recall's scope would not.
_TEXT_CACHE_SIZE = 20_000
# cachetools' LRU reorders on every read, so reads take the lock too.
_text_lock = threading.Lock()
_texts: LRUCache[uuid.UUID, str] = LRUCache(maxsize=_TEXT_CACHE_SIZE)


def rerank_enabled() -> bool:
    """Whether hybrid re-orders its head: candidates configured and token vectors at hand."""
    return (
        settings.MEMORY_RECALL_RERANK_CANDIDATES > 0 and token_vectors.late_interaction_available()
    )


def late_interaction_scores(
    query: str,
    fused: Sequence[tuple[uuid.UUID, float]],
    texts: Mapping[uuid.UUID, str],
) -> list[tuple[uuid.UUID, float]]:
    """``fused`` (``(id, fused score)``, best first) with its head re-ordered by the blend, as
    ``(id, score)``, best first, given the head's ``texts`` by id. Ids without a text (the row
    is gone) are dropped; ties keep the fused order."""
    present = [(pk, score) for pk, score in fused if pk in texts]
    head_size = settings.MEMORY_RECALL_RERANK_CANDIDATES
    head, tail = present[:head_size], present[head_size:]
    weight = settings.MEMORY_RECALL_RERANK_WEIGHT
    if len(head) < 2:
        late = [1.0] * len(head)
    else:
        query_tokens = token_vectors.query_token_vectors(query)
        documents = token_vectors.document_token_vectors([texts[pk] for pk, _ in head])
        sims = token_vectors.max_sims(query_tokens, documents)
        # Near-equal matches say little: they weigh in proportion to their spread.
        confidence = min(
            1.0, (max(sims) - min(sims)) / settings.MEMORY_RECALL_RERANK_CONFIDENT_SPREAD
        )
        late = [confidence * value for value in _min_max(sims)]
    blended = [
        weight * similarity + (1.0 - weight) * score
        for similarity, (_pk, score) in zip(late, head, strict=True)
    ]
    order = sorted(range(len(head)), key=lambda index: (-blended[index], index))
    return [(head[index][0], round(blended[index], 6)) for index in order] + [
        (pk, round((1.0 - weight) * score, 6)) for pk, score in tail
    ]


def fetch_texts(scope: CompiledScope, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The text of each of ``ids`` still in ``scope``: all late interaction reads of a row."""
    if not ids:
        return {}
    table, pk = scope.table, quote(scope.using, "id")
    text = quote(scope.using, "text")
    sql = (
        f"SELECT {table}.{pk}, {table}.{text} FROM {table} "  # noqa: S608
        f"WHERE {table}.{pk} = ANY(%s) AND {scope.where}"
    )
    return dict(fetch_values(scope, sql, [list(ids), *scope.params]))


def head_texts(scope: CompiledScope, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The text of each of ``ids`` (a ranking's head, read in ``scope``): those this process
    read before from memory, the rest in one statement (none when all are known). A row
    retired since its ranking was read is still scored here; the final read of the winners'
    rows (:func:`~apps.memory.selectors.recall.scope.fetch_rows`) leaves it out."""
    with _text_lock:
        found = {pk: text for pk in ids if (text := _texts.get(pk)) is not None}
    missing = [pk for pk in ids if pk not in found]
    if missing:
        read = fetch_texts(scope, missing)
        with _text_lock:
            _texts.update(read)
        found.update(read)
    return found


def forget_head_texts() -> None:
    """Empty this process's texts (tests that count statements)."""
    with _text_lock:
        _texts.clear()


def _min_max(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    # All equal: each is as good as the best.
    return [(value - low) / (high - low) if high > low else 1.0 for value in values]
