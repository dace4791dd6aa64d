"""Recall never compares a query with vectors of another model: the vector leg ranks only rows
whose ``embedding_model`` is the query's, and a row another model embedded is found by its
words alone, as a pending row is, until it is re-embedded (docs/embeddings.md, "Which model
made a vector")."""

import pytest

from apps.extraction.promotion.types import Candidate
from apps.knowledge.selectors import knowledge_search
from apps.knowledge.services import article_embedding_text, propose_article
from apps.memory.models import Memory, MemorySource
from apps.memory.selectors import memory_recall
from apps.memory.services import memory_embed_pending, promotion_persist
from apps.tenancy.selectors import tenant_embedding_fingerprint
from apps.tenancy.services import tenant_configure_embedding_provider
from tests.knowledge.factories import ArticleFactory
from tests.knowledge.helpers import CURATOR
from tests.memory.factories import MemoryFactory
from tests.providers.vectors import fake_provider_vector

pytestmark = pytest.mark.django_db

OTHER_MODEL = "0000000000000000"
QUERY = "Which editor theme does the user prefer?"


def _stale(tenant, text, **fields):
    """A row whose stored vector is the query's own, but made by another model: in the
    query's space it would be the perfect match, so ranking it at all would show a mix."""
    return MemoryFactory.create(
        tenant=tenant,
        text=text,
        embedding=fake_provider_vector(QUERY),
        embedding_model=OTHER_MODEL,
        **fields,
    )


def test_the_vector_leg_skips_rows_of_another_model(tenant):
    stale = _stale(tenant, "Stored before the model changed.")
    current = MemoryFactory.create(
        tenant=tenant, text="The user prefers a dark theme.", embedded=True
    )

    result = memory_recall(tenant=tenant, subject_id="agent-a", query=QUERY, mode="semantic")

    assert [hit.memory.pk for hit in result.results] == [current.pk]
    assert stale.pk not in {hit.memory.pk for hit in result.results}


def test_hybrid_finds_a_row_of_another_model_by_its_words_with_no_similarity(tenant):
    stale = _stale(tenant, "The user prefers the solarized editor theme.")
    MemoryFactory.create(tenant=tenant, text="Deploys happen on Thursdays.", embedded=True)

    result = memory_recall(tenant=tenant, subject_id="agent-a", query=QUERY)

    hits = {hit.memory.pk: hit for hit in result.results}
    assert stale.pk in hits
    assert hits[stale.pk].selection_reason == "keyword"
    assert hits[stale.pk].similarity is None


def test_a_subject_whose_rows_are_all_of_another_model_still_answers(tenant):
    rows = [_stale(tenant, f"The editor theme note {n}.") for n in range(3)]

    result = memory_recall(tenant=tenant, subject_id="agent-a", query=QUERY)

    assert {hit.memory.pk for hit in result.results} == {row.pk for row in rows}
    assert result.meta["fallback"] is False


def test_after_a_model_change_new_writes_are_ranked_and_old_ones_wait(tenant):
    old = MemoryFactory.create(tenant=tenant, text="The user prefers dark mode.", embedded=True)
    tenant.embedding_provider = "fake"
    tenant.embedding_config = {"model": "model-b"}
    tenant.save()
    new = MemoryFactory.create(tenant=tenant, text="The user prefers light mode.")
    memory_embed_pending(memory_ids=[str(new.pk)])
    new.refresh_from_db()
    assert new.embedding_model == tenant_embedding_fingerprint(tenant=tenant)
    assert old.embedding_model != new.embedding_model

    semantic = memory_recall(
        tenant=tenant, subject_id="agent-a", query="The user prefers", mode="semantic"
    )
    hybrid = memory_recall(tenant=tenant, subject_id="agent-a", query="The user prefers")

    assert [hit.memory.pk for hit in semantic.results] == [new.pk]
    assert {hit.memory.pk for hit in hybrid.results} == {old.pk, new.pk}


def test_knowledge_search_ranks_only_articles_of_the_querys_model(tenant):
    stale = ArticleFactory.create(
        tenant=tenant,
        title="Editor themes",
        body="Which editor theme does the user prefer",
        embedding=fake_provider_vector(QUERY),
        embedding_model=OTHER_MODEL,
    )

    result = knowledge_search(tenant=tenant, viewer=CURATOR, query=QUERY)

    hits = {hit.article.pk: hit for hit in result.results}
    assert stale.pk in hits  # by its words
    assert hits[stale.pk].semantic_score is None
    assert hits[stale.pk].embedding is None  # never compared with other candidates either


def test_the_novelty_gate_compares_only_articles_of_the_same_model(tenant):
    body = "Refunds are processed within five business days."
    ArticleFactory.create(
        tenant=tenant,
        title="Refunds, old wording",
        body="Something else entirely.",
        # The new text's own vector, by another model: a paraphrase in the new space.
        embedding=fake_provider_vector(article_embedding_text(title="Refund timing", body=body)),
        embedding_model=OTHER_MODEL,
    )

    proposal = propose_article(
        tenant=tenant, viewer=CURATOR, title="Refund timing", body=body, category="finding"
    )

    assert proposal.created
    assert proposal.verdict == "created"


def test_promotion_never_takes_a_memory_of_another_model_for_a_paraphrase(tenant):
    text = "The user deploys on Fridays."
    old = MemoryFactory.create(
        tenant=tenant,
        text="Something the old model embedded.",
        source=MemorySource.PROMOTED,
        # The new candidate's own vector, by another model: a paraphrase in the new space.
        embedding=fake_provider_vector(text),
        embedding_model=OTHER_MODEL,
    )

    outcome = promotion_persist(
        tenant=tenant,
        subject_id="agent-a",
        session_id="s",
        candidates=[Candidate(text=text, confidence=1.0)],
    )

    assert outcome.promoted == 1
    assert Memory.objects.get(pk=old.pk).superseded_by_id is None


def test_over_http_a_model_change_keeps_recall_answering(agent, tenant):
    old = agent.post("/api/v1/memory", {"text": "The user prefers tabs.", "embed_now": True})
    # What configure_provider does (its caches of the tenant forget the old provider).
    tenant_configure_embedding_provider(tenant=tenant, provider="fake", config={"model": "b"})
    new = agent.post("/api/v1/memory", {"text": "The user prefers spaces.", "embed_now": True})
    old_id, new_id = old.json()["data"]["id"], new.json()["data"]["id"]

    hybrid = agent.post("/api/v1/memory/recall", {"query": "The user prefers"})
    semantic = agent.post(
        "/api/v1/memory/recall", {"query": "The user prefers", "mode": "semantic"}
    )
    merged = agent.post("/api/v1/recall", {"query": "The user prefers"})

    assert (hybrid.status_code, semantic.status_code, merged.status_code) == (200, 200, 200)
    hits = {hit["memory"]["id"]: hit for hit in hybrid.json()["data"]}
    assert set(hits) == {old_id, new_id}
    assert hits[old_id]["similarity"] is None
    assert hits[new_id]["similarity"] is not None
    assert [hit["memory"]["id"] for hit in semantic.json()["data"]] == [new_id]
