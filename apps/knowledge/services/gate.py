"""The novelty gate: every agent write-back (and every graduation) goes through here.

Verdicts, checked in this order against the articles the proposing viewer can see in the
proposal's partition (global, or global ∪ its project):

* ``duplicate`` — a visible article has the same normalised body (its
  ``embedding_content_hash``): that canonical article is returned, nothing is written. This
  check needs no vector, so it runs before the embedding is spent.
* ``deduplicated`` — cosine similarity to the nearest visible article ≥
  ``KNOWLEDGE_DEDUPE_THRESHOLD``: the canonical article, nothing written.
* ``gated_to_draft`` — ≥ ``KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD``: created as an unpublished
  draft, linked ``potential_conflict`` to its neighbour for a curator to resolve.
* ``created`` — otherwise: created and published.

Embeddings unavailable → the gate "falls open": :class:`GateUnavailable` (503
``gate_unavailable``) and nothing is written. docs/knowledge.md has the measured thresholds.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.conf import settings

from apps.core.db.transactions import write_transaction
from apps.core.telemetry import emit
from apps.knowledge.exceptions import GateUnavailable
from apps.knowledge.models import (
    ArticleSource,
    ArticleStatus,
    ArticleVisibility,
    LinkKind,
)
from apps.knowledge.services.articles import (
    Proposal,
    Verdict,
    exact_duplicate,
    insert_article,
    link_articles,
    nearest_article,
    title_violation_as_taken,
)
from apps.knowledge.services.fields import clean_article
from apps.knowledge.services.locks import lock_knowledge_writes
from apps.knowledge.services.quota import article_admit
from apps.knowledge.viewer import Viewer
from apps.providers.embeddings import EmbeddingsUnavailable, embed_query
from apps.tenancy.models import Tenant
from apps.tenancy.selectors import tenant_embedding_config


def _report(tenant: Tenant, verdict: str, similarity: float | None, source: str) -> None:
    measurements = {"count": 1.0}
    if similarity is not None:
        measurements["similarity"] = similarity
    emit(
        f"knowledge_gate.{verdict}",
        measurements,
        {"tenant_id": str(tenant.pk), "source": source},
    )


def propose_article(
    *,
    tenant: Tenant,
    viewer: Viewer,
    title: str,
    body: str,
    category: str,
    tags: Sequence[str] = (),
    project_id: uuid.UUID | None = None,
    visibility: str = ArticleVisibility.TENANT,
    owner_agent_id: str = "",
    source: str = ArticleSource.AGENT,
    source_memory_id: uuid.UUID | None = None,
) -> Proposal:
    """Run a proposed article through the novelty gate (see the module docstring).

    The viewer decides what counts as "already known": only articles it can see are
    compared, so an agent's proposal is never answered with another agent's private
    article. An agent viewer always owns what it proposes (``owner_agent_id`` is its subject).
    The candidate is embedded synchronously and its vector stored on the created row.

    Raises ``ArticleQuotaExceeded`` (409) when the tenant or the viewer's subject stores its
    quota of articles (checked before the embedding too, so a subject out of quota spends
    none), ``GateUnavailable`` (503) when embeddings are unavailable, ``TitleTaken`` (409)
    when an article the viewer can see in the same title namespace has the title, and
    ``InvalidArticle``/``InvalidProjectId`` (422) for bad input, in every case writing nothing.
    """
    fields = clean_article(
        tenant=tenant,
        viewer=viewer,
        title=title,
        body=body,
        category=category,
        tags=tags,
        project_id=project_id,
        visibility=visibility,
        owner_agent_id=owner_agent_id,
        source=source,
        source_memory_id=source_memory_id,
    )
    # Cheap pre-check: an exact duplicate never spends an embedding.
    duplicate = exact_duplicate(tenant=tenant, viewer=viewer, fields=fields)
    if duplicate is not None:
        _report(tenant, Verdict.DUPLICATE, None, fields.source)
        return Proposal(verdict=Verdict.DUPLICATE, created=False, article=duplicate)
    # Cheap pre-check too: a subject out of quota never spends an embedding. The insert checks
    # again under the lock.
    article_admit(tenant=tenant, author_subject_id=fields.author_subject_id)
    # Embedded outside the transaction: no lock or connection is held across a provider call.
    config = tenant_embedding_config(tenant=tenant)
    try:
        vector = embed_query(config, fields.embedding_text)
    except EmbeddingsUnavailable as exc:
        emit(
            "knowledge_gate.unavailable",
            {"count": 1},
            {"tenant_id": str(tenant.pk), "reason": str(exc.reason)},
        )
        raise GateUnavailable(
            "The novelty gate cannot run while embeddings are unavailable; nothing was "
            "written. Retry once they recover.",
            details={"reason": str(exc.reason)},
        ) from exc
    with title_violation_as_taken(fields.title), write_transaction():
        lock_knowledge_writes(tenant=tenant)
        # Re-checked under the lock: a concurrent proposal may have won since the pre-check.
        duplicate = exact_duplicate(tenant=tenant, viewer=viewer, fields=fields)
        if duplicate is not None:
            _report(tenant, Verdict.DUPLICATE, None, fields.source)
            return Proposal(verdict=Verdict.DUPLICATE, created=False, article=duplicate)
        neighbour, similarity = nearest_article(
            tenant=tenant,
            viewer=viewer,
            project_id=fields.project_id,
            vector=vector,
            model=config.fingerprint,
        )
        if neighbour is not None and similarity >= settings.KNOWLEDGE_DEDUPE_THRESHOLD:
            _report(tenant, Verdict.DEDUPLICATED, similarity, fields.source)
            return Proposal(verdict=Verdict.DEDUPLICATED, created=False, article=neighbour)
        gated = neighbour is not None and similarity >= settings.KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD
        status = ArticleStatus.DRAFT if gated else ArticleStatus.PUBLISHED
        article = insert_article(
            tenant=tenant,
            fields=fields,
            status=status,
            # The gate publishes on its own: only a curator's proposal is curated.
            curated=viewer.can_curate,
            embedding=vector,
            embedding_model=config.fingerprint,
        )
        if gated and neighbour is not None:
            link_articles(
                tenant=tenant,
                from_article=article,
                to_article=neighbour,
                kind=LinkKind.POTENTIAL_CONFLICT,
            )
    verdict = Verdict.GATED_TO_DRAFT if gated else Verdict.CREATED
    _report(tenant, verdict, similarity if neighbour is not None else None, fields.source)
    return Proposal(verdict=verdict, created=True, article=article)
