"""Measuring the fusion: does keyword + semantic beat either leg alone on the corpus?

Loads the calibration corpus into a throwaway tenant through the real write path, runs every
relevant question through each leg alone and through the reciprocal-rank fusion search uses
(the very functions in :mod:`apps.knowledge.selectors.retrieval`), reports hit@1 and MRR, and
removes the tenant again.
"""

from __future__ import annotations

import secrets
import uuid
from typing import NamedTuple

from django.db import connections

from apps.core.db.routers import PRIMARY
from apps.knowledge.models import Article
from apps.knowledge.selectors import (
    Legs,
    fuse,
    keyword_leg,
    semantic_leg,
    visible_articles,
)
from apps.knowledge.services import article_create, article_embed_pending
from apps.knowledge.viewer import Viewer
from apps.providers.embeddings import embed_search_query
from apps.tenancy.models import ApiKeyRole, Tenant
from apps.tenancy.selectors import tenant_embedding_config
from apps.tenancy.services import tenant_configure_embedding_provider, tenant_create
from lab.gate_calibration.corpus import CORPUS, IDENTIFIER_QUERIES, RELEVANT_QUERIES

VIEWER = Viewer(role=ApiKeyRole.USER, subject_id="knowledge-calibrate")
POOL = 20


class MethodFigures(NamedTuple):
    query_set: str  # questions | identifiers
    method: str  # keyword | semantic | fused
    hit_at_1: int
    mrr: float
    misses: list[str]  # queries whose top hit was not the expected article


class FusionFigures(NamedTuple):
    queries: dict[str, int]
    methods: list[MethodFigures]


def _rank_of(ranked: list[uuid.UUID], expected: uuid.UUID) -> int | None:
    return ranked.index(expected) + 1 if expected in ranked else None


def _figures(query_set: str, method: str, ranks: list[tuple[str, int | None]]) -> MethodFigures:
    return MethodFigures(
        query_set=query_set,
        method=method,
        hit_at_1=sum(1 for _, rank in ranks if rank == 1),
        mrr=round(sum(1 / rank for _, rank in ranks if rank) / len(ranks), 3),
        misses=[query for query, rank in ranks if rank != 1],
    )


def measure_fusion(*, provider: str | None) -> FusionFigures:
    """Measure on a throwaway tenant embedding with ``provider`` (None: the default)."""
    tenant = tenant_create(slug=f"knowledge-calibrate-{secrets.token_hex(4)}", name="calibrate")
    try:
        if provider:
            tenant_configure_embedding_provider(tenant=tenant, provider=provider, config={})
        ids = {}
        for article in CORPUS:
            proposal = article_create(
                tenant=tenant,
                viewer=VIEWER,
                title=article.title,
                body=article.body,
                category=article.category,
                tags=list(article.tags),
            )
            ids[article.title] = proposal.article.pk
        article_embed_pending(article_ids=[str(pk) for pk in ids.values()])
        config = tenant_embedding_config(tenant=tenant)
        base = visible_articles(tenant=tenant, viewer=VIEWER, project_id=None, alias=PRIMARY)
        sets = {"questions": RELEVANT_QUERIES, "identifiers": IDENTIFIER_QUERIES}
        methods: list[MethodFigures] = []
        for query_set, cases in sets.items():
            ranks: dict[str, list[tuple[str, int | None]]] = {
                "keyword": [],
                "semantic": [],
                "fused": [],
            }
            for query, title in cases:
                expected = ids[title]
                keyword = keyword_leg(base, query, POOL)
                semantic, _ = semantic_leg(
                    base,
                    embed_search_query(config, query),
                    POOL,
                    PRIMARY,
                    embedding_model=config.fingerprint,
                )
                fused = fuse(Legs(keyword=keyword, semantic=semantic))
                ranks["keyword"].append((query, _rank_of([pk for pk, _ in keyword], expected)))
                ranks["semantic"].append((query, _rank_of([pk for pk, _ in semantic], expected)))
                ranks["fused"].append((query, _rank_of([e.article_id for e in fused], expected)))
            methods += [_figures(query_set, method, rows) for method, rows in ranks.items()]
        return FusionFigures(
            queries={query_set: len(cases) for query_set, cases in sets.items()},
            methods=methods,
        )
    finally:
        _discard(tenant)


def _discard(tenant: Tenant) -> None:
    """Remove the throwaway tenant: its articles (links and events cascade), then the row.

    The tenant row goes by one plain DELETE, as the memory benchmark does, rather than the
    ORM collector (which would walk every app's tables): the database's own foreign keys
    refuse it should anything else still point at the tenant.
    """
    Article.objects.filter(tenant=tenant).delete()
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {Tenant._meta.db_table} WHERE id = %s",  # noqa: S608 - model constant
            [tenant.pk],
        )
