"""The novelty gate: every verdict, the fell-open path, and what each one writes (or not)."""

from __future__ import annotations

import threading
import uuid

import numpy as np
import pytest
from django.db import connections

from apps.core.exceptions import ServiceUnavailable
from apps.knowledge.exceptions import GateUnavailable, InvalidArticle, InvalidProjectId, TitleTaken
from apps.knowledge.models import Article, ArticleLink
from apps.knowledge.services import propose_article
from apps.knowledge.viewer import Viewer
from apps.providers.embeddings import EmbeddingConfig, embed_texts
from lab.gate_calibration import LIGHT_EDIT_PAIRS, NEAR_PAIRS, UNRELATED_PAIRS
from tests.knowledge.helpers import break_embeddings, publish, table_rows
from tests.projects.factories import ProjectFactory

pytestmark = pytest.mark.django_db

FREEZE = (
    "Friday deploy freeze",
    "We do not deploy to production after 14:00 UTC on Fridays. Hotfixes for incidents are "
    "the only exception, and they need a second reviewer on call.",
)
# Measured with the fake embedder against FREEZE (see test_the_fixture_texts_fall_in_their_bands).
REWORDED = (
    "Friday deploy freeze policy",
    "We do not deploy to production after 14:00 UTC on Fridays. Hotfixes for incidents are "
    "the only exception, and they need a second reviewer on call today.",
)
CONFLICTING = (
    "Thursday deploy freeze",
    "We do not deploy to production after 16:00 UTC on Thursdays. Hotfixes for incidents are "
    "the only exception.",
)
UNRELATED = (
    "PDF renderer memory leak",
    "Worker memory grew by about 40 MB per rendered invoice until the pod restarted.",
)


def propose(tenant, viewer, text, **fields):
    title, body = text
    fields.setdefault("category", "decision")
    return propose_article(tenant=tenant, viewer=viewer, title=title, body=body, **fields)


def fake_cosine(first, second) -> float:
    config = EmbeddingConfig(provider="fake")
    a, b = embed_texts(config, [f"{first[0]}\n\n{first[1]}", f"{second[0]}\n\n{second[1]}"])
    return float(np.dot(a, b))


def test_the_fixture_texts_fall_in_their_bands(settings):
    # The verdict tests below rely on these similarities under the default thresholds.
    assert fake_cosine(FREEZE, REWORDED) >= settings.KNOWLEDGE_DEDUPE_THRESHOLD
    assert (
        settings.KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD
        <= fake_cosine(FREEZE, CONFLICTING)
        < settings.KNOWLEDGE_DEDUPE_THRESHOLD
    )
    assert fake_cosine(FREEZE, UNRELATED) < settings.KNOWLEDGE_NEAR_DUPLICATE_THRESHOLD


def test_a_novel_article_is_created_published_embedded_and_owned_by_the_agent(tenant, agent_viewer):
    # when
    proposal = propose(tenant, agent_viewer, FREEZE, tags=["Deploy", "deploy", " Process "])

    # then
    article = Article.objects.get(tenant=tenant, pk=proposal.article.pk)
    assert (proposal.verdict, proposal.created) == ("created", True)
    assert article.status == "published"
    assert article.published_at is not None
    assert article.owner_agent_id == "agent-a"
    assert article.source == "agent"
    assert article.tags == ["deploy", "process"]
    assert article.embedding is not None
    assert article.embedded_at is not None
    assert article.version == 1


def test_same_content_is_a_duplicate_and_spends_no_embedding(tenant, agent_viewer, mocker):
    # given
    canonical = propose(tenant, agent_viewer, FREEZE).article
    before = table_rows()
    spy = mocker.patch("apps.knowledge.services.gate.embed_query")

    # when: a different title, the same body modulo whitespace
    proposal = propose(tenant, agent_viewer, ("Deploys and Fridays", "  " + FREEZE[1] + "\n"))

    # then
    assert (proposal.verdict, proposal.created) == ("duplicate", False)
    assert proposal.article.pk == canonical.pk
    assert spy.call_count == 0
    assert table_rows() == before


def test_a_near_copy_is_deduplicated_to_the_canonical_article(tenant, agent_viewer):
    # given
    canonical = propose(tenant, agent_viewer, FREEZE).article
    before = table_rows()

    # when
    proposal = propose(tenant, agent_viewer, REWORDED)

    # then
    assert (proposal.verdict, proposal.created) == ("deduplicated", False)
    assert proposal.article.pk == canonical.pk
    assert table_rows() == before


def test_a_near_duplicate_is_gated_to_a_draft_linked_to_its_neighbour(tenant, agent_viewer):
    # given
    neighbour = propose(tenant, agent_viewer, FREEZE).article

    # when
    proposal = propose(tenant, agent_viewer, CONFLICTING)

    # then
    article = Article.objects.get(pk=proposal.article.pk)
    assert (proposal.verdict, proposal.created) == ("gated_to_draft", True)
    assert article.status == "draft"
    assert article.published_at is None
    assert list(
        ArticleLink.objects.filter(tenant=tenant).values_list(
            "from_article_id", "to_article_id", "kind"
        )
    ) == [(article.pk, neighbour.pk, "potential_conflict")]


def test_an_unrelated_article_is_created_beside_an_existing_one(tenant, agent_viewer):
    # given
    propose(tenant, agent_viewer, FREEZE)

    # when
    proposal = propose(tenant, agent_viewer, UNRELATED)

    # then
    assert (proposal.verdict, proposal.created) == ("created", True)
    assert proposal.article.status == "published"
    assert ArticleLink.objects.count() == 0


@pytest.mark.parametrize(
    ("_case", "how"), [("provider_down", "outage"), ("provider_error", "marker")]
)
def test_the_gate_falls_open_without_writing_anything(tenant, agent_viewer, _case, how):
    # given
    propose(tenant, agent_viewer, FREEZE)
    text = UNRELATED
    if how == "outage":
        break_embeddings(tenant)
    else:
        text = (UNRELATED[0], UNRELATED[1] + " [[embed-fail]]")
    before = table_rows()

    # when
    with pytest.raises(GateUnavailable) as raised:
        propose(tenant, agent_viewer, text)

    # then
    assert isinstance(raised.value, ServiceUnavailable)
    assert raised.value.http_status == 503
    assert raised.value.code == "gate_unavailable"
    assert raised.value.details == {"reason": "provider_error"}
    assert table_rows() == before


def test_an_exact_duplicate_is_still_recognised_while_embeddings_are_down(tenant, agent_viewer):
    # given: nothing needs a vector to see that the body is the same
    canonical = propose(tenant, agent_viewer, FREEZE).article
    break_embeddings(tenant)

    # when
    proposal = propose(tenant, agent_viewer, ("Another title", FREEZE[1]))

    # then
    assert (proposal.verdict, proposal.article.pk) == ("duplicate", canonical.pk)


@pytest.mark.parametrize("title", ["Friday deploy freeze", "FRIDAY  deploy   FREEZE"])
def test_a_taken_title_with_other_content_is_a_conflict(tenant, agent_viewer, title):
    # given
    propose(tenant, agent_viewer, FREEZE)
    before = table_rows()

    # when
    with pytest.raises(TitleTaken) as raised:
        propose(tenant, agent_viewer, (title, UNRELATED[1]))

    # then
    assert raised.value.http_status == 409
    assert raised.value.code == "title_taken"
    assert table_rows() == before


def test_an_archived_articles_title_can_be_reused(tenant, agent_viewer):
    # given
    publish(tenant, UNRELATED[0], "An older, archived take.", status="archived")

    # when
    proposal = propose(tenant, agent_viewer, UNRELATED)

    # then
    assert proposal.verdict == "created"


def test_articles_the_agent_cannot_see_never_answer_its_proposal(tenant, agent_viewer):
    # given: agent-b's private article and someone's draft have the same body
    publish(tenant, "Private", FREEZE[1], visibility="owner", owner_agent_id="agent-b")
    publish(tenant, "A draft", FREEZE[1] + " (draft)", status="draft")

    # when
    proposal = propose(tenant, agent_viewer, FREEZE)

    # then
    assert (proposal.verdict, proposal.created) == ("created", True)


def test_an_agent_always_owns_what_it_proposes(tenant, agent_viewer):
    # when
    proposal = propose(tenant, agent_viewer, FREEZE, visibility="owner", owner_agent_id="agent-b")

    # then
    assert proposal.article.owner_agent_id == "agent-a"
    assert proposal.article.visibility == "owner"


def test_a_graduation_style_proposal_keeps_its_source_memory(tenant):
    # given: what the memory app's graduation does
    memory_id = uuid.uuid4()

    # when
    proposal = propose(
        tenant,
        Viewer.for_subject("agent-a"),
        FREEZE,
        visibility="owner",
        source="graduated",
        source_memory_id=memory_id,
    )

    # then
    article = Article.objects.get(pk=proposal.article.pk)
    assert (article.source, article.source_memory_id, article.visibility) == (
        "graduated",
        memory_id,
        "owner",
    )


def test_a_project_proposal_dedupes_against_global_but_not_the_reverse(tenant, agent_viewer):
    # given
    project = ProjectFactory.create(tenant=tenant)
    in_project = propose(tenant, agent_viewer, FREEZE, project_id=project.pk).article

    # when: a global proposal of the same body does not see the project's article
    global_proposal = propose(tenant, agent_viewer, ("Freeze (global)", FREEZE[1]))
    # and a project proposal does see the global one
    project_proposal = propose(
        tenant, agent_viewer, ("Freeze again", FREEZE[1]), project_id=project.pk
    )

    # then
    assert global_proposal.verdict == "created"
    assert project_proposal.verdict == "duplicate"
    assert project_proposal.article.pk == in_project.pk  # the oldest match wins


@pytest.mark.parametrize(
    ("_case", "fields", "error"),
    [
        ("blank_title", {"title": "   "}, InvalidArticle),
        ("blank_body", {"body": "\n\n"}, InvalidArticle),
        ("bad_category", {"category": "rumour"}, InvalidArticle),
        ("bad_visibility", {"visibility": "public"}, InvalidArticle),
        ("long_title", {"title": "x" * 301}, InvalidArticle),
        ("foreign_project", {"project_id": uuid.uuid4()}, InvalidProjectId),
    ],
)
def test_invalid_proposals_are_refused_before_anything_happens(
    tenant, agent_viewer, mocker, _case, fields, error
):
    # given
    spy = mocker.patch("apps.knowledge.services.gate.embed_query")
    args = {"title": "A title", "body": "A body.", "category": "finding", **fields}

    # when
    with pytest.raises(error) as raised:
        propose_article(tenant=tenant, viewer=agent_viewer, **args)

    # then
    assert raised.value.http_status == 422
    assert spy.call_count == 0
    assert Article.objects.count() == 0


def test_with_the_local_model_the_calibration_pairs_get_their_documented_verdicts(
    tenant, agent_viewer, local_embeddings
):
    # given: the calibration corpus behind docs/knowledge.md
    light = next(pair for pair in LIGHT_EDIT_PAIRS if pair.label == "clause added")
    conflict = next(pair for pair in NEAR_PAIRS if pair.label == "rate limit changed")
    unrelated = next(pair for pair in UNRELATED_PAIRS if pair.label == "oncall vs uploads")

    def split(text):
        title, body = text.split("\n\n", 1)
        return title, body

    verdicts = []
    for pair in (light, conflict, unrelated):
        propose(tenant, agent_viewer, split(pair.first), tags=[pair.label])
        second_title, second_body = split(pair.second)
        # Distinct titles, so a same-title pair reaches the similarity check.
        second = (f"{second_title} (v2)", second_body)

        # when
        verdicts.append(propose(tenant, agent_viewer, second).verdict)

    # then
    assert verdicts == ["deduplicated", "gated_to_draft", "created"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("_case", "second_body", "expected"),
    [
        ("same_content", FREEZE[1], {"created", "duplicate"}),
        ("other_content", UNRELATED[1], {"created", "title_taken"}),
    ],
)
def test_concurrent_proposals_of_one_title_never_escape_as_an_integrity_error(
    tenant, agent_viewer, _case, second_body, expected
):
    # given
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def run(body: str) -> None:
        try:
            barrier.wait(timeout=10)
            outcomes.append(propose(tenant, agent_viewer, (FREEZE[0], body)).verdict)
        except TitleTaken:
            outcomes.append("title_taken")
        finally:
            connections.close_all()

    # when
    threads = [threading.Thread(target=run, args=(body,)) for body in (FREEZE[1], second_body)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    # then
    assert set(outcomes) == expected
    assert Article.objects.filter(tenant=tenant).count() == 1
