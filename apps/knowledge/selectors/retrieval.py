"""The two retrieval legs of hybrid search, the curated lookup, and rank fusion.

See :mod:`apps.knowledge.selectors.search` for how they are combined; this module only
retrieves and fuses ids and scores over the rows the viewer may see.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connections, transaction
from django.db.models import (
    Case,
    DateTimeField,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Lower
from pgvector.django import CosineDistance

from apps.core.db.iterative_scan import OFF, iterative_scan
from apps.core.db.routers import HEAVY_READ
from apps.core.heavy_read import heavy_read_slot
from apps.knowledge.models import (
    ALIAS_TAG_PREFIX,
    TEXT_SEARCH_CONFIG,
    Article,
    ArticleStatus,
)
from apps.knowledge.phrases import normalise_phrase
from apps.knowledge.viewer import Viewer, visible_q
from apps.projects.scoping import project_partition
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_fingerprint

KEYWORD = "keyword"
SEMANTIC = "semantic"
KEYWORD_AND_SEMANTIC = "keyword+semantic"
KEYWORD_FALLBACK = "keyword_fallback"
UNSCORED = "unscored"
_EXPLICIT_SYNTAX = re.compile(r'"|(^|\s)-\w|(^|\s)or(\s|$)', re.IGNORECASE)


@dataclass
class Fused:
    article_id: uuid.UUID
    keyword_rank: int | None = None
    keyword_score: float | None = None
    semantic_rank: int | None = None
    semantic_score: float | None = None
    fused: float | None = None


@dataclass
class Legs:
    keyword: list[tuple[uuid.UUID, float]] = field(default_factory=list)
    semantic: list[tuple[uuid.UUID, float]] | None = None
    #: ``ann_iterative_scan`` (and its reason when ``unavailable``); empty without a vector leg.
    ann_iterative_scan: dict[str, str] = field(default_factory=dict)
    curated_id: uuid.UUID | None = None
    alias: str = HEAVY_READ


class _AnyTermsQuery(SearchQuery):
    """``websearch_to_tsquery`` with its top-level ANDs turned into ORs (phrases survive)."""

    template = "replace(%(function)s(%(expressions)s)::text, ' & ', ' | ')::tsquery"


def visible_articles(
    *, tenant: Tenant, viewer: Viewer, project_id: uuid.UUID | None, alias: str
) -> QuerySet[Article]:
    return (
        Article.objects.using(alias)
        .filter(tenant_id=tenant.pk)
        .filter(visible_q(viewer))
        .filter(project_partition(project_id=project_id))
    )


def tsquery_for(query: str) -> tuple[SearchQuery, str]:
    if _EXPLICIT_SYNTAX.search(query):
        return SearchQuery(query, search_type="websearch", config=TEXT_SEARCH_CONFIG), "websearch"
    return _AnyTermsQuery(query, search_type="websearch", config=TEXT_SEARCH_CONFIG), "any_terms"


def keyword_leg(base: QuerySet[Article], query: str, fetch: int) -> list[tuple[uuid.UUID, float]]:
    tsquery, _ = tsquery_for(query)
    rows = (
        base.filter(search_vector=tsquery)
        .annotate(text_rank=SearchRank(F("search_vector"), tsquery, cover_density=True))
        .order_by("-text_rank", "id")
        .values_list("pk", "text_rank")[:fetch]
    )
    return [(pk, float(rank)) for pk, rank in rows]


def _exact(
    embedded: QuerySet[Article], vector: list[float], fetch: int
) -> list[tuple[uuid.UUID, float]]:
    rows = (
        embedded.annotate(distance=CosineDistance("embedding", vector))
        # `+ 0` keeps this an exact scan: HNSW can only serve ORDER BY on the bare operator.
        .order_by(ExpressionWrapper(F("distance") + Value(0.0), output_field=FloatField()), "id")
        .values_list("pk", "distance")[:fetch]
    )
    return [(pk, float(distance)) for pk, distance in rows]


def _ann(
    embedded: QuerySet[Article], vector: list[float], fetch: int, alias: str, *, iterative: bool
) -> list[tuple[uuid.UUID, float]]:
    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        if iterative:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)",
            [str(max(settings.KNOWLEDGE_HNSW_EF_SEARCH, fetch))],
        )
        if iterative:
            # Without the iterative scan pgvector has no such setting (setting it would fail).
            cursor.execute(
                "SELECT set_config('hnsw.max_scan_tuples', %s, true)",
                [str(settings.KNOWLEDGE_HNSW_MAX_SCAN_TUPLES)],
            )
        rows = list(
            embedded.annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance")
            .values_list("pk", "distance")[:fetch]
        )
    return [(pk, float(distance)) for pk, distance in rows]


def semantic_leg(
    base: QuerySet[Article], vector: list[float], fetch: int, alias: str, *, embedding_model: str
) -> tuple[list[tuple[uuid.UUID, float]], dict[str, str]]:
    """Nearest visible articles as (id, cosine similarity), and the ann_iterative_scan meta
    (``apps.core.db.iterative_scan``: the value, and its reason when ``unavailable``).

    Only articles ``embedding_model`` (the model that made ``vector``) embedded are ranked:
    one embedded by another model (before a model change, until the background migration
    re-embeds it) is found by the keyword leg only, as a pending one is."""
    embedded = base.filter(embedding__isnull=False, embedding_model=embedding_model)
    threshold = settings.KNOWLEDGE_EXACT_SCAN_MAX_ROWS
    # Bounded count: at most threshold + 1 index entries are read, whatever the tenant's size.
    available = embedded.order_by().values("pk")[: threshold + 1].count()
    if available <= threshold:
        rows, scan = _exact(embedded, vector, fetch), {"ann_iterative_scan": OFF}
    else:
        support = iterative_scan(alias)
        # The partial HNSW index covers published rows; the viewer's unpublished ones (its own
        # drafts, or a curator's drafts) are few and scanned exactly.
        published = _ann(
            embedded.filter(status=ArticleStatus.PUBLISHED),
            vector,
            fetch,
            alias,
            iterative=support.available,
        )
        unpublished = _exact(embedded.exclude(status=ArticleStatus.PUBLISHED), vector, fetch)
        rows = sorted(published + unpublished, key=lambda row: (row[1], str(row[0])))[:fetch]
        scan = support.meta()
        if len(rows) < fetch:
            # The index gave up before `fetch` rows (max_scan_tuples, or one ef_search pool
            # without the iterative scan); finish exactly.
            rows = _exact(embedded, vector, fetch)
    return [(pk, 1.0 - distance) for pk, distance in rows], scan


def curated_id(base: QuerySet[Article], query: str) -> uuid.UUID | None:
    """The curated answer to ``query``: an article a curator wrote, edited or published whose
    title or ``alias:`` tag is the query. An agent's own article is never pinned, whatever
    its title (it ranks like any other result).

    One statement: a title match first (the lowest id of several), else the most recently
    published article carrying the alias."""
    phrase = normalise_phrase(query)
    if not phrase:
        return None
    by_title = Q(title_key=phrase)
    return (
        base.filter(curated=True)
        .alias(title_key=Func(Lower("title"), Value("?!. "), function="rtrim"))
        .filter(by_title | Q(tags__contains=[ALIAS_TAG_PREFIX + phrase]))
        .alias(
            title_first=Case(When(by_title, then=Value(0)), default=Value(1)),
            published_for_alias=Case(
                When(by_title, then=Value(None)),
                default=F("published_at"),
                output_field=DateTimeField(),
            ),
        )
        .order_by("title_first", F("published_for_alias").desc(nulls_last=True), "id")
        .values_list("pk", flat=True)
        .first()
    )


def run_legs(
    *,
    tenant: Tenant,
    viewer: Viewer,
    project_id: uuid.UUID | None,
    query: str,
    vector: list[float] | None,
    fetch: int,
) -> Legs:
    legs = Legs()
    base = visible_articles(tenant=tenant, viewer=viewer, project_id=project_id, alias=HEAVY_READ)
    with heavy_read_slot(tenant_id=tenant.pk, subject_id=viewer.subject_id):
        legs.curated_id = curated_id(base, query)
        legs.keyword = keyword_leg(base, query, fetch)
        if vector is not None:
            legs.semantic, legs.ann_iterative_scan = semantic_leg(
                base,
                vector,
                fetch,
                HEAVY_READ,
                embedding_model=tenant_embedding_fingerprint(tenant=tenant),
            )
    return legs


def fuse(legs: Legs) -> list[Fused]:
    k = settings.KNOWLEDGE_RRF_K
    entries: dict[uuid.UUID, Fused] = {}
    for rank, (pk, score) in enumerate(legs.keyword, start=1):
        entry = entries.setdefault(pk, Fused(article_id=pk))
        entry.keyword_rank, entry.keyword_score = rank, score
    for rank, (pk, similarity) in enumerate(legs.semantic or [], start=1):
        entry = entries.setdefault(pk, Fused(article_id=pk))
        entry.semantic_rank, entry.semantic_score = rank, similarity
    # Normalised by the best attainable sum, so 1.0 means "first in every leg that ran".
    ceiling = (2 if legs.semantic is not None else 1) / (k + 1)
    for entry in entries.values():
        total = sum(1 / (k + rank) for rank in (entry.keyword_rank, entry.semantic_rank) if rank)
        entry.fused = total / ceiling
    inf = float("inf")
    return sorted(
        entries.values(),
        key=lambda e: (
            -(e.fused or 0.0),
            e.semantic_rank or inf,
            e.keyword_rank or inf,
            str(e.article_id),
        ),
    )


def selection_reason_for(entry: Fused, *, degraded: bool) -> str:
    if entry.keyword_rank is None and entry.semantic_rank is None:
        return UNSCORED
    if degraded:
        return KEYWORD_FALLBACK
    if entry.keyword_rank is not None and entry.semantic_rank is not None:
        return KEYWORD_AND_SEMANTIC
    return KEYWORD if entry.keyword_rank is not None else SEMANTIC
