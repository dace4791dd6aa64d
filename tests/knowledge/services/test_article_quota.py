"""The article quotas: articles per author and per tenant, refused at the bound before anything
is written (and, through the gate, before any embedding), exactly at the bound under
concurrent writers, and one author's articles never count against another's."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError, connection, transaction

from apps.core.db.transactions import unit_of_work
from apps.dataops.services import erase_subject, erase_tenant
from apps.knowledge.exceptions import ArticleQuotaExceeded
from apps.knowledge.models import Article
from apps.knowledge.services import (
    article_archive,
    article_create,
    knowledge_import,
    lock_tenant_article_counts,
    propose_article,
)
from apps.knowledge.transfer import ArticleRecord
from apps.knowledge.viewer import Viewer
from apps.memory.exceptions import Forgotten, MemoryNotFound
from apps.memory.services import memory_forget, memory_graduate
from apps.providers.embeddings import embed_query
from tests.concurrency import Race, race
from tests.knowledge.helpers import publish, table_rows
from tests.memory.helpers import remember

WRITERS = 24


def _text(index: int) -> tuple[str, str]:
    """A title and body that share no word with any other index's, so the gate creates each."""
    words = " ".join(f"w{index}x{step}" for step in range(12))
    return f"Note {index}", f"Finding {words}."


def _propose(tenant, viewer, index):
    title, body = _text(index)
    return propose_article(tenant=tenant, viewer=viewer, title=title, body=body, category="finding")


def _count(tenant, author=None):
    articles = Article.objects.filter(tenant=tenant)
    return articles.count() if author is None else articles.filter(author_subject_id=author).count()


@pytest.mark.django_db
def test_each_write_is_charged_to_the_subject_that_wrote_it(tenant, agent_viewer):
    by_agent = _propose(tenant, agent_viewer, 1).article
    # A curator's article for an agent is the curator's, not the owner's.
    by_curator = publish(tenant, "Curated", owner_agent_id="agent-a", visibility="owner")

    assert (by_agent.author_subject_id, by_curator.author_subject_id) == (
        "agent-a",
        "helper-curator",
    )


@pytest.mark.django_db
def test_the_article_past_the_authors_quota_is_refused_before_the_embedding(
    tenant, agent_viewer, other_agent_viewer, settings, mocker
):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 2
    _propose(tenant, agent_viewer, 1)
    archived = _propose(tenant, agent_viewer, 2).article
    article_archive(tenant=tenant, viewer=agent_viewer, article_id=archived.pk)  # still stored
    before = table_rows()
    embed = mocker.patch("apps.knowledge.services.gate.embed_query", wraps=embed_query)

    with pytest.raises(ArticleQuotaExceeded) as refused:
        _propose(tenant, agent_viewer, 3)

    assert refused.value.code == "article_quota_exceeded"
    assert refused.value.details == {"scope": "author", "quota": 2, "stored": 2}
    assert embed.call_count == 0
    assert table_rows() == before
    # Another author, and a curator naming agent-a its owner, still write.
    assert _propose(tenant, other_agent_viewer, 4).created is True
    assert publish(tenant, "For agent-a", owner_agent_id="agent-a", visibility="owner")


@pytest.mark.django_db
def test_an_exact_duplicate_still_answers_at_the_quota(tenant, agent_viewer, settings):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 1
    first = _propose(tenant, agent_viewer, 1)

    again = _propose(tenant, agent_viewer, 1)

    assert (again.verdict, again.created, again.article.pk) == (
        "duplicate",
        False,
        first.article.pk,
    )


@pytest.mark.django_db
def test_the_tenant_quota_bounds_every_author_and_only_its_tenant(
    tenant, other_tenant, agent_viewer, other_agent_viewer, curator, settings
):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT = 2
    _propose(tenant, agent_viewer, 1)
    _propose(tenant, other_agent_viewer, 2)

    for write in (
        lambda: _propose(tenant, agent_viewer, 3),
        lambda: article_create(
            tenant=tenant, viewer=curator, title="T", body="B", category="finding"
        ),
    ):
        with pytest.raises(ArticleQuotaExceeded) as refused:
            write()
        assert refused.value.details == {"scope": "tenant", "quota": 2, "stored": 2}

    assert _count(tenant) == 2
    assert _propose(other_tenant, agent_viewer, 3).created is True


@pytest.mark.django_db
def test_an_import_charges_each_article_to_its_owner(tenant, settings):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 1
    records = [
        ArticleRecord(title="Owned one", body="a", category="finding", owner_agent_id="agent-a"),
        ArticleRecord(title="Owned two", body="b", category="finding", owner_agent_id="agent-a"),
        ArticleRecord(title="Unowned one", body="c", category="finding"),
        ArticleRecord(title="Unowned two", body="d", category="finding"),
    ]

    report = knowledge_import(tenant=tenant, records=records)

    assert [outcome.verdict for outcome in report.outcomes] == [
        "created",
        "failed",
        "created",
        "created",
    ]
    assert report.outcomes[1].error.startswith("article_quota_exceeded: ")
    assert (_count(tenant, "agent-a"), _count(tenant, "")) == (1, 2)


def _race(propose):
    """Proposals racing; each must create its article or be refused (the texts share no word,
    so the gate never finds one a duplicate)."""

    def write(index: int) -> None:
        proposal = propose(index)
        assert proposal.created, f"proposal {index}: {proposal.verdict}"

    return race(write, writers=WRITERS, refused_by=ArticleQuotaExceeded)


@pytest.mark.django_db(transaction=True)
def test_concurrent_proposals_stop_exactly_at_the_authors_quota(tenant, settings):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 10
    agent = Viewer.for_subject("racer")

    raced = _race(lambda index: _propose(tenant, agent, index))

    assert raced == Race(written=10, refused=WRITERS - 10)
    assert _count(tenant, "racer") == 10


@pytest.mark.django_db(transaction=True)
def test_a_flooding_author_leaves_the_quiet_one_its_articles(tenant, settings):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_AUTHOR = 5
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT = 9
    noisy, quiet = Viewer.for_subject("noisy"), Viewer.for_subject("quiet")

    raced = _race(lambda index: _propose(tenant, quiet if index % 6 == 0 else noisy, index))

    # The noisy author stops at its 5; the quiet one's 4 fit under the tenant's 9.
    assert raced == Race(written=9, refused=WRITERS - 9)
    assert (_count(tenant, "noisy"), _count(tenant, "quiet")) == (5, 4)


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_stop_exactly_at_the_tenants_quota(tenant, settings):
    settings.KNOWLEDGE_QUOTA_ARTICLES_PER_TENANT = 10
    authors = [Viewer.for_subject(f"agent-{n}") for n in range(4)]

    raced = _race(lambda index: _propose(tenant, authors[index % 4], index))

    assert raced == Race(written=10, refused=WRITERS - 10)
    assert _count(tenant) == 10


FROM_ARTICLES = """
    SELECT tenant_id, author_subject_id, count(*) FROM knowledge_article
     GROUP BY tenant_id, author_subject_id
"""
FROM_AUTHOR_USAGE = (
    "SELECT tenant_id, author_subject_id, articles FROM knowledge_author_article_usage"
)
FROM_TENANT_ARTICLES = "SELECT tenant_id, count(*) FROM knowledge_article GROUP BY tenant_id"
FROM_TENANT_USAGE = "SELECT tenant_id, articles FROM knowledge_tenant_article_usage"


def _rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return sorted(tuple(str(value) for value in row) for row in cursor.fetchall())


def _assert_counts_match_articles():
    assert _rows(FROM_AUTHOR_USAGE) == _rows(FROM_ARTICLES)
    assert _rows(FROM_TENANT_USAGE) == _rows(FROM_TENANT_ARTICLES)


@pytest.mark.django_db
def test_every_path_keeps_the_article_counts(tenant, other_tenant, agent_viewer, mocker):
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")

    _propose(tenant, agent_viewer, 1)
    publish(tenant, "Curated")
    _propose(other_tenant, agent_viewer, 2)
    memory = remember(tenant, "agent-a", "The billing service retries webhooks three times.")
    memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)
    knowledge_import(
        tenant=tenant, records=[ArticleRecord(title="I", body="i", category="finding")]
    )
    _assert_counts_match_articles()

    memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memory.pk)  # its article too
    Article.objects.filter(tenant=tenant, title="Curated").update(author_subject_id="someone")
    _assert_counts_match_articles()
    erase_subject(tenant=tenant, subject_id="agent-a", requested_by="test")
    _assert_counts_match_articles()
    erase_tenant(tenant=tenant, requested_by="test")
    _assert_counts_match_articles()
    assert _rows(FROM_TENANT_USAGE) == [(str(other_tenant.pk), "1")]


@pytest.mark.django_db(transaction=True)
def test_the_article_counts_lock_holds_while_the_tenant_has_no_article(tenant):
    """The first article's writers queue too: with no count row yet, a lock on that row would
    let two of them through, to meet again on the row the first insert creates."""
    waited = []

    def second_writer() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '300ms'")
                lock_tenant_article_counts(tenant=tenant)
        except OperationalError as exc:
            waited.append(str(exc))
        finally:
            connection.close()

    assert _count(tenant) == 0
    with transaction.atomic():
        lock_tenant_article_counts(tenant=tenant)
        contender = threading.Thread(target=second_writer)
        contender.start()
        contender.join()

    assert len(waited) == 1
    assert "lock timeout" in waited[0]


@pytest.mark.django_db(transaction=True)
def test_graduations_forgets_and_writes_of_one_tenant_never_wait_in_a_cycle(tenant, mocker):
    """Keyed graduations (one transaction with their stamp), forgets of the same memories and
    article writes, all at once: each finishes or is refused, none deadlocks."""
    mocker.patch("apps.memory.queue.DRAIN_EMBEDDINGS.apply_async")

    memories = [
        remember(tenant, "agent-a", f"Fact {index}: {' '.join(_text(index + 100))}")
        for index in range(8)
    ]

    def graduate(index: int) -> None:
        with unit_of_work():
            memory_graduate(tenant=tenant, subject_id="agent-a", memory_id=memories[index].pk)

    def forget(index: int) -> None:
        memory_forget(tenant=tenant, subject_id="agent-a", memory_id=memories[index].pk)

    def write(index: int) -> None:
        _propose(tenant, Viewer.for_subject("agent-b"), index + 200)

    works = (graduate, forget, write)

    raced = race(
        lambda index: works[index % 3](index // 3),
        writers=3 * len(memories),
        # Forgotten first: graduation finds nothing, or its tombstone.
        refused_by=(MemoryNotFound, Forgotten),
    )

    assert raced.failures == ()
    assert Article.objects.filter(tenant=tenant, source="graduated").count() == 0
    _assert_counts_match_articles()
